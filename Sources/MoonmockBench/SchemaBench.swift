import Foundation
import MoonmockCore
import MoonmockSchema

/// `MoonmockBench schema`: one valid 50-field object (strings, integers, an email, a date-time,
/// an enum, a nested object and an array) validated again and again; microseconds per validation.
enum SchemaBench {
    static func run(_ arguments: [String]) -> Int32 {
        var properties: [String: JSONValue] = [:], instance: [String: JSONValue] = [:], required: [JSONValue] = []
        for i in 0..<50 {
            let name = "field\(i)"
            required.append(.string(name))
            switch i % 5 {
            case 0: properties[name] = .object(["type": .string("string"), "minLength": .integer(1), "maxLength": .integer(64)]); instance[name] = .string("value \(i)")
            case 1: properties[name] = .object(["type": .string("integer"), "minimum": .integer(0)]); instance[name] = .integer(Int64(i))
            case 2: properties[name] = .object(["type": .string("string"), "format": .string(i % 2 == 0 ? "email" : "date-time")])
                instance[name] = .string(i % 2 == 0 ? "user\(i)@example.com" : "2026-12-06T10:00:00Z")
            case 3: properties[name] = .object(["enum": .array([.string("a"), .string("b"), .string("c")])]); instance[name] = .string("b")
            default: properties[name] = .object(["type": .string("array"), "items": .object(["type": .string("number")]), "maxItems": .integer(10)])
                instance[name] = .array([.integer(1), .double(2.5)])
            }
        }
        let schema = JSONSchema(.object(["type": .string("object"), "properties": .object(properties), "required": .array(required),
                                         "additionalProperties": .bool(false)]))
        let value = JSONValue.object(instance)
        precondition(schema.isValid(value), "\(schema.validate(value))")
        let rounds = arguments.first.flatMap(Int.init) ?? 20_000
        for _ in 0..<1000 { _ = schema.isValid(value) }
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<rounds { _ = schema.isValid(value) }
        let micros = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(rounds) / 1000
        print(String(format: "a 50-field object: %.2f µs per validation (%d rounds)", micros, rounds))
        return 0
    }
}
