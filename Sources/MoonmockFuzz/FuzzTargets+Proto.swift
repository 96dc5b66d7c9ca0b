import Foundation
import MoonmockCore
import MoonmockProto

extension FuzzTargets {
    /// A descriptor set of one message with every kind of field (scalars, enum, repeated, map,
    /// nested, oneof, proto3 optional), made with protoc from Tests/Fuzz/fuzz.proto.
    static let protoSchema = try! ProtoSchema(descriptorSet: Array(Data(base64Encoded: "CpAECgpmdXp6LnByb3RvEgJmeiLYAwoDQWxsEgwKAWEYASABKAVSAWESDAoBYhgCIAEoA1IBYhIMCgFjGAMgASgNUgFjEgwKAWQYBCABKARSAWQSDAoBZRgFIAEoEVIBZRIMCgFmGAYgASgSUgFmEgwKAWcYByABKAdSAWcSDAoBaBgIIAEoBlIBaBIMCgFpGAkgASgPUgFpEgwKAWoYCiABKBBSAWoSDAoBaxgLIAEoAlIBaxIMCgFsGAwgASgBUgFsEgwKAW0YDSABKAhSAW0SDAoBbhgOIAEoCVIBbhIMCgFvGA8gASgMUgFvEhcKAXAYECABKA4yCS5mei5Db2xvclIBcBIMCgFxGBEgAygFUgFxEgwKAXIYEiADKAlSAXISHAoBcxgTIAMoCzIOLmZ6LkFsbC5TRW50cnlSAXMSFQoBdBgUIAEoCzIHLmZ6LkFsbFIBdBIOCgF1GBUgASgJSABSAXUSFwoBdhgWIAEoCzIHLmZ6LkFsbEgAUgF2EhEKAXcYFyABKAVIAVIBd4gBARIVCgF4GBggAygLMgcuZnouQWxsUgF4GjQKBlNFbnRyeRIQCgNrZXkYASABKAlSA2tleRIUCgV2YWx1ZRgCIAEoA1IFdmFsdWU6AjgBQgYKBHBpY2tCBAoCX3cqGwoFQ29sb3ISBwoDUkVEEAASCQoFR1JFRU4QAWIGcHJvdG8z")!))

    /// The protobuf codec: bytes that decode as fz.All encode back to bytes that decode to the
    /// same value (the JSON mapping is a fixed point after one round), and the request envelopes
    /// of every protocol split without a crash.
    static func proto(_ input: [UInt8]) {
        let codec = ProtoCodec(protoSchema)
        _ = try? RPCFraming.requestMessages(.grpc(json: false), input)
        _ = try? RPCFraming.requestMessages(.grpcWeb(text: true, json: false), input)
        guard let value = try? codec.decode(input, as: "fz.All") else { return }
        let bytes: [UInt8]
        do { bytes = try codec.encode(value, as: "fz.All") } catch { preconditionFailure("decoded but does not encode: \(error)") }
        guard let again = try? codec.decode(bytes, as: "fz.All") else { preconditionFailure("its own encoding does not decode") }
        precondition(again == value || String(decoding: value.encoded(), as: UTF8.self).contains("NaN"), "the round trip changed the value: \(String(decoding: value.encoded(), as: UTF8.self)) became \(String(decoding: again.encoded(), as: UTF8.self))")
        precondition((try? codec.encode(again, as: "fz.All")) == bytes, "encoding is not deterministic")
    }
}
