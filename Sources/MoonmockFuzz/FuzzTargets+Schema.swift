import MoonmockCore
import MoonmockSchema

extension FuzzTargets {
    /// The JSON Schema validator: the input cut in two at its first newline, a schema and an
    /// instance (both JSON; anything else is left). Validating never crashes, ends (self-references
    /// included), gives the same errors twice, and "valid" means no errors; every draft is tried.
    static func schema(_ input: [UInt8]) {
        let cut = input.firstIndex(of: 0x0A) ?? input.count
        guard let schemaValue = try? JSONValue(parsing: Array(input[..<cut])) else { return }
        let instance = cut < input.count ? ((try? JSONValue(parsing: Array(input[(cut + 1)...]))) ?? .null) : .null
        for draft in JSONSchema.Draft.allCases {
            let schema = JSONSchema(schemaValue, draft: draft, assertFormats: true)
            let first = schema.validate(instance)
            precondition(first == schema.validate(instance), "validation is not deterministic")
            precondition(schema.isValid(instance) == first.isEmpty)
        }
    }
}
