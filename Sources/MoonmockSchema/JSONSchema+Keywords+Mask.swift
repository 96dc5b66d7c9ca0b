/// Which keywords a schema object has, read once from its keys: looking each keyword up in the
/// object would hash every name of the vocabulary at every node (most were absent).
struct KeywordMask: OptionSet {
    let rawValue: UInt64

    static let type = KeywordMask(rawValue: 1 << 0), enumeration = KeywordMask(rawValue: 1 << 1), const = KeywordMask(rawValue: 1 << 2)
    static let numbers = KeywordMask(rawValue: 1 << 3), strings = KeywordMask(rawValue: 1 << 4), arrays = KeywordMask(rawValue: 1 << 5)
    static let objects = KeywordMask(rawValue: 1 << 6), format = KeywordMask(rawValue: 1 << 7), ref = KeywordMask(rawValue: 1 << 8)
    static let dynamic = KeywordMask(rawValue: 1 << 9), logic = KeywordMask(rawValue: 1 << 10), condition = KeywordMask(rawValue: 1 << 11)
    static let properties = KeywordMask(rawValue: 1 << 12), items = KeywordMask(rawValue: 1 << 13), contains = KeywordMask(rawValue: 1 << 14)
    static let unevaluated = KeywordMask(rawValue: 1 << 15), id = KeywordMask(rawValue: 1 << 16), openAPI = KeywordMask(rawValue: 1 << 17)
    static let dependencies = KeywordMask(rawValue: 1 << 18)

    init(rawValue: UInt64) { self.rawValue = rawValue }

    init<Keys: Sequence<String>>(keys: Keys) {
        var mask: UInt64 = 0
        for key in keys {
            switch key {
            case "type": mask |= Self.type.rawValue
            case "enum": mask |= Self.enumeration.rawValue
            case "const": mask |= Self.const.rawValue
            case "maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum", "multipleOf": mask |= Self.numbers.rawValue
            case "maxLength", "minLength", "pattern", "contentEncoding": mask |= Self.strings.rawValue
            case "maxItems", "minItems", "uniqueItems": mask |= Self.arrays.rawValue
            case "maxProperties", "minProperties", "required", "dependentRequired": mask |= Self.objects.rawValue
            case "format": mask |= Self.format.rawValue
            case "$ref": mask |= Self.ref.rawValue
            case "$dynamicRef", "$recursiveRef": mask |= Self.dynamic.rawValue
            case "allOf", "anyOf", "oneOf", "not": mask |= Self.logic.rawValue
            case "if": mask |= Self.condition.rawValue
            case "properties", "patternProperties", "additionalProperties", "propertyNames": mask |= Self.properties.rawValue
            case "items", "prefixItems", "additionalItems": mask |= Self.items.rawValue
            case "contains": mask |= Self.contains.rawValue
            case "unevaluatedProperties", "unevaluatedItems": mask |= Self.unevaluated.rawValue
            case "$id", "id": mask |= Self.id.rawValue
            case "nullable", "discriminator": mask |= Self.openAPI.rawValue
            case "dependentSchemas", "dependencies": mask |= Self.dependencies.rawValue
            default: break
            }
        }
        rawValue = mask
    }
}
