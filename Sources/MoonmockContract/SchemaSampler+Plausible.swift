import MoonmockCore

/// With a ``Fake`` generator: strings by format and by their property's name, as a production
/// API would hold them, still within the schema's lengths (a value that does not fit falls back
/// to the placeholder rules).
extension SchemaSampler {
    /// Property names (lower-cased, without `_` and `-`) and the fake value they read as.
    static let nameHints: [String: String] = [
        "name": "name", "fullname": "name", "displayname": "name", "firstname": "first_name", "givenname": "first_name",
        "lastname": "last_name", "surname": "last_name", "familyname": "last_name", "email": "email", "emailaddress": "email",
        "username": "username", "login": "username", "handle": "username", "phone": "phone", "phonenumber": "phone",
        "mobile": "phone", "telephone": "phone", "company": "company", "companyname": "company", "organization": "company",
        "jobtitle": "job_title", "title": "sentence", "street": "street", "address": "street", "addressline1": "street",
        "streetaddress": "street", "city": "city", "town": "city", "postcode": "postcode", "postalcode": "postcode",
        "zip": "postcode", "zipcode": "postcode", "country": "country", "countrycode": "country_code",
        "iban": "iban", "description": "sentence", "summary": "sentence", "bio": "paragraph", "comment": "sentence",
        "avatar": "image_url", "avatarurl": "image_url", "image": "image_url", "imageurl": "image_url", "photo": "image_url",
        "photourl": "image_url", "picture": "image_url", "thumbnail": "image_url", "color": "color_hex", "colour": "color_hex",
        "ip": "ipv4", "ipaddress": "ipv4", "useragent": "user_agent", "createdat": "past", "updatedat": "past",
        "birthday": "date", "birthdate": "date", "dateofbirth": "date", "latitude": "latitude", "lat": "latitude",
        "longitude": "longitude", "lng": "longitude", "lon": "longitude", "uuid": "uuid", "guid": "uuid",
    ]

    static let formatKinds: [String: String] = [
        "email": "email", "idn-email": "email", "uuid": "uuid", "date": "date", "date-time": "datetime", "ipv4": "ipv4",
        "ipv6": "ipv6", "uri": "image_url", "url": "image_url",
    ]

    static func hint(_ name: String?) -> String? {
        guard let name else { return nil }
        var key = ""
        for c in name.lowercased() where c != "_" && c != "-" { key.append(c) }
        return nameHints[key]
    }

    mutating func plausibleString(_ o: [String: JSONValue], name: String?) -> String? {
        guard fake != nil, o["pattern"] == nil else { return nil }
        let format = o["format"]?.stringValue
        let kind: String
        if let format {
            guard let k = Self.formatKinds[format] else { return nil }
            kind = k
        } else {
            guard let k = Self.hint(name) else { return nil }
            kind = k
        }
        guard let value = try? fake!.value(kind) else { return nil }
        let text: String
        switch value {
        case .string(let s): text = s
        case .double(let x): text = String(x)
        default: return nil
        }
        let least = o["minLength"].flatMap(Self.integer).map(Int.init) ?? 0
        let most = o["maxLength"].flatMap(Self.integer).map(Int.init) ?? Int.max
        return text.count >= least && text.count <= most ? text : nil
    }

    /// `latitude` and `longitude` numbers within their bounds.
    mutating func plausibleNumber(_ o: [String: JSONValue], name: String?) -> JSONValue? {
        guard fake != nil, let kind = Self.hint(name), kind == "latitude" || kind == "longitude",
              case .double(let x)? = try? fake!.value(kind) else { return nil }
        if let low = Self.number(o["minimum"]), x < low { return nil }
        if let high = Self.number(o["maximum"]), x > high { return nil }
        return .double(x)
    }
}
