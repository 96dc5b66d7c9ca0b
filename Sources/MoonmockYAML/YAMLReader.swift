import CYAML
import Foundation
import MoonmockCore

/// YAML (1.1/1.2 as OpenAPI files use it) read into a ``JSONValue`` through libyaml's document
/// loader: mappings, sequences, and plain scalars typed by the core schema (`null`, booleans,
/// integers, floats; quoted ones stay strings). Aliases are followed to a bounded depth.
///
/// ```swift
/// let spec = try YAMLReader.read(Array("openapi: 3.0.3\ninfo: {title: Pets}".utf8))
/// ```
public enum YAMLReader {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public static func read(_ bytes: [UInt8]) throws -> JSONValue {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { throw Failure(description: "YAML: cannot start the parser") }
        defer { yaml_parser_delete(&parser) }
        var document = yaml_document_t()
        let loaded = bytes.withUnsafeBufferPointer { buffer -> Int32 in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            return yaml_parser_load(&parser, &document)
        }
        guard loaded == 1 else {
            let problem = parser.problem.map { String(cString: $0) } ?? "not YAML"
            throw Failure(description: "YAML line \(parser.problem_mark.line + 1): \(problem)")
        }
        defer { yaml_document_delete(&document) }
        guard let root = yaml_document_get_root_node(&document) else { return .null }
        var budget = 1_000_000   // nodes visited: a billion-laughs file of aliases stops here
        return try value(root, &document, depth: 0, budget: &budget)
    }

    private static func value(_ node: UnsafeMutablePointer<yaml_node_t>, _ document: inout yaml_document_t, depth: Int, budget: inout Int) throws -> JSONValue {
        budget -= 1
        guard depth < 200, budget > 0 else { throw Failure(description: "YAML: nested too deep, or too many aliases") }
        switch node.pointee.type {
        case YAML_SCALAR_NODE:
            var length = 0, style: Int32 = 0
            let text = mm_yaml_scalar(node, &length, &style).map { String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self) } ?? ""
            return Int(style) == Int(YAML_PLAIN_SCALAR_STYLE.rawValue) ? typed(text) : .string(text)
        case YAML_SEQUENCE_NODE:
            var count = 0
            guard let items = mm_yaml_sequence(node, &count) else { return .array([]) }
            var out: [JSONValue] = []
            for i in 0..<count {
                guard let child = yaml_document_get_node(&document, items[i]) else { continue }
                out.append(try value(child, &document, depth: depth + 1, budget: &budget))
            }
            return .array(out)
        case YAML_MAPPING_NODE:
            var count = 0
            guard let pairs = mm_yaml_mapping(node, &count) else { return .object([:]) }
            var out: [String: JSONValue] = [:]
            for i in 0..<count {
                guard let k = yaml_document_get_node(&document, pairs[i].key), let v = yaml_document_get_node(&document, pairs[i].value) else { continue }
                let key = try value(k, &document, depth: depth + 1, budget: &budget)
                let name: String
                switch key {
                case .string(let s): name = s
                case .integer(let n): name = String(n)   // `200:` under responses
                case .bool(let b): name = b ? "true" : "false"
                case .double(let d): name = String(d)
                default: name = ""
                }
                out[name] = try value(v, &document, depth: depth + 1, budget: &budget)
            }
            return .object(out)
        default:
            return .null
        }
    }

    /// A plain scalar by the core schema.
    static func typed(_ s: String) -> JSONValue {
        switch s {
        case "", "~", "null", "Null", "NULL": return .null
        case "true", "True", "TRUE": return .bool(true)
        case "false", "False", "FALSE": return .bool(false)
        default: break
        }
        if let i = Int64(s), !s.hasPrefix("+") { return .integer(i) }
        if s.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }), let d = Double(s), d.isFinite,
           s.first.map({ $0.isNumber || $0 == "-" || $0 == "." }) == true {
            return .double(d)
        }
        return .string(s)
    }
}
