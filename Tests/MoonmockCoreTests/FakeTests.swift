import Foundation
import MoonmockCore
import Testing

@Suite("Fake data (mock.fake)")
struct FakeTests {
    func text(_ fake: inout Fake, _ kind: String, _ args: [String: JSONValue] = [:]) throws -> String {
        let v = try fake.value(kind, args)
        if case .string(let s) = v { return s }
        return String(decoding: v.encoded(), as: UTF8.self)
    }

    @Test("every kind in every locale: the same seed, the same values; another seed, others")
    func deterministic() throws {
        for locale in FakeLocale.allCases {
            var a = Fake(seed: 99, locale: locale, now: 1_700_000_000), b = Fake(seed: 99, locale: locale, now: 1_700_000_000)
            var c = Fake(seed: 100, locale: locale, now: 1_700_000_000)
            var differs = 0
            for kind in Fake.kinds {
                let x = try text(&a, kind), y = try text(&b, kind)
                #expect(x == y, "\(locale) \(kind)")
                #expect(!x.isEmpty, "\(locale) \(kind)")
                if try text(&c, kind) != x { differs += 1 }
            }
            #expect(differs > Fake.kinds.count / 2, "\(locale)")
        }
    }

    @Test("values look like what they are: formats, ranges, check digits")
    func shapes() throws {
        var fake = Fake(seed: 7, now: 1_700_000_000)
        for _ in 0..<200 {
            #expect(try text(&fake, "uuid").range(of: #"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"#, options: .regularExpression) != nil)
            #expect(try text(&fake, "ulid").range(of: #"^0[0-9A-HJKMNP-TV-Z]{25}$"#, options: .regularExpression) != nil)
            #expect(try text(&fake, "email").range(of: #"^[a-z0-9._]+@example\.(com|org|net)$"#, options: .regularExpression) != nil)
            #expect(try text(&fake, "color_hex").range(of: #"^#[0-9a-f]{6}$"#, options: .regularExpression) != nil)
            #expect(try text(&fake, "ipv4").split(separator: ".").count == 4)
            #expect(try text(&fake, "ipv6").split(separator: ":").count == 8)
            #expect(try text(&fake, "phone").range(of: #"^(\(\d{3}\) \d{3}-\d{4}|\+1 \d{3}-\d{3}-\d{4})$"#, options: .regularExpression) != nil)
            for country in ["DE", "GB", "FR", "ES", "NL"] {
                let iban = try text(&fake, "iban", ["country": .string(country)])
                #expect(iban.hasPrefix(country) && Self.mod97(iban) == 1, "\(iban)")
            }
            for (brand, length, prefix) in [("visa", 16, "4"), ("mastercard", 16, "5"), ("amex", 15, "3")] {
                let card = try text(&fake, "credit_card", ["brand": .string(brand)])
                #expect(card.count == length && card.hasPrefix(prefix) && Self.luhn(card), "\(card)")
            }
            let n = try fake.value("int", ["min": .integer(3), "max": .integer(5)])
            #expect([JSONValue.integer(3), .integer(4), .integer(5)].contains(n))
            guard case .double(let x) = try fake.value("float", ["min": .integer(1), "max": .integer(2), "digits": .integer(1)]) else { Issue.record("float"); continue }
            #expect(x >= 1 && x <= 2 && (x * 10).rounded() == x * 10)
            let day = try text(&fake, "date", ["from": .string("2024-02-28"), "to": .string("2024-03-01")])
            #expect(["2024-02-28", "2024-02-29", "2024-03-01"].contains(day), "\(day)")
            let past = try text(&fake, "past", ["days": .integer(2)])
            #expect(past <= "2023-11-14T22:13:20Z" && past >= "2023-11-12T22:13:20Z", "\(past)")
            #expect(try text(&fake, "future", ["days": .integer(1)]) >= "2023-11-14T22:13:20Z")
            guard case .double(let lat) = try fake.value("latitude") else { Issue.record("latitude"); continue }
            #expect(abs(lat) <= 90)
        }
        #expect(try text(&fake, "words", ["n": .integer(5)]).split(separator: " ").count == 5)
        let sentence = try text(&fake, "sentence", ["words": .integer(4)])
        #expect(sentence.split(separator: " ").count == 4 && sentence.hasSuffix(".") && sentence.first!.isUppercase)
        #expect(try text(&fake, "image_url", ["w": .integer(10), "h": .integer(20)]).hasSuffix("/10/20"))
        var never = 0
        for _ in 0..<100 { if try fake.value("bool", ["p": .double(0)]) == .bool(true) { never += 1 } }
        #expect(never == 0)
    }

    @Test("locales write names, places and phone numbers of their own")
    func locales() throws {
        var de = Fake(seed: 1, locale: .de), ja = Fake(seed: 1, locale: .ja), es = Fake(seed: 1, locale: .es), fr = Fake(seed: 1, locale: .fr)
        let phone = try text(&de, "phone")
        #expect(phone.hasPrefix("+49 ") || phone.hasPrefix("0"), "\(phone)")
        #expect(try text(&fr, "phone").range(of: #"^(\+33 \d|0\d)( \d\d){4}$"#, options: .regularExpression) != nil)
        #expect(try text(&ja, "postcode").range(of: #"^\d{3}-\d{4}$"#, options: .regularExpression) != nil)
        #expect(try text(&ja, "name").unicodeScalars.contains { $0.value > 0x3000 })
        // Japanese names are written family name first; their e-mail addresses are romanised.
        #expect(try text(&ja, "email").range(of: #"^[a-z0-9._]+@example\.(com|org|net)$"#, options: .regularExpression) != nil)
        #expect(try text(&es, "name").split(separator: " ").count >= 3)
        #expect(try text(&de, "iban").hasPrefix("DE"))
        #expect(FakeLocale(named: "de_DE") == .de && FakeLocale(named: "pt") == nil)
    }

    @Test("a wrong kind or argument says what is wrong")
    func errors() throws {
        var fake = Fake(seed: 1)
        #expect(throws: Fake.Failure.self) { try fake.value("nmae") }
        do { _ = try fake.value("nmae") } catch { #expect(String(describing: error) == "fake.nmae does not exist; did you mean fake.name?") }
        do { _ = try fake.value("int", ["min": .integer(5), "max": .integer(1)]) } catch { #expect(String(describing: error) == "fake.int: min 5 is more than max 1") }
        do { _ = try fake.value("bool", ["p": .integer(2)]) } catch { #expect(String(describing: error) == "fake.bool: p is a probability from 0 to 1, got 2.0") }
        do { _ = try fake.value("date", ["from": .string("May 1")]) } catch { #expect(String(describing: error).contains("a date (2024-01-31)")) }
        do { _ = try fake.value("iban", ["country": .string("JP")]) } catch { #expect(String(describing: error).contains("DE, GB, FR, ES or NL")) }
    }

    @Test("templates: {{fake.KIND name=value}} checked when made, seeded per request")
    func templates() throws {
        let t = try Template(#"{"n": "{{fake.name}}", "i": {{fake.int min=1 max=3}}, "c": "{{fake.city locale=de}}"}"#)
        let env = MockEnvironment.fixed(now: 0, seed: 5)
        var request = MockRequest(method: "GET", url: "http://x/a")
        request.id = 3
        let a = try t.render(request: request, params: [:], state: StateStore(), environment: env, escapeJSON: true)
        let b = try t.render(request: request, params: [:], state: StateStore(), environment: env, escapeJSON: true)
        #expect(a == b)
        let value = try JSONValue(parsing: a)
        #expect([JSONValue.integer(1), .integer(2), .integer(3)].contains(value["i"] ?? .null))
        #expect(throws: Template.ParseError.self) { try Template("{{fake.nmae}}") }
        do { _ = try Template("{{fake.int min=x}}") } catch { #expect(String(describing: error) == "template: {{fake.int min=x}}: fake.int: min must be an integer") }
        do { _ = try Template("{{fake.city locale=pt}}") } catch { #expect(String(describing: error).contains("no locale 'pt'")) }
    }

    static func mod97(_ iban: String) -> Int {
        var r = 0
        for c in Array((iban.dropFirst(4) + iban.prefix(4)).utf8) { r = c >= 65 ? (r * 100 + Int(c) - 55) % 97 : (r * 10 + Int(c) - 48) % 97 }
        return r
    }

    static func luhn(_ n: String) -> Bool {
        var sum = 0
        for (i, c) in n.reversed().enumerated() {
            let d = Int(String(c))! * (i % 2 == 1 ? 2 : 1)
            sum += d > 9 ? d - 9 : d
        }
        return sum % 10 == 0
    }
}
