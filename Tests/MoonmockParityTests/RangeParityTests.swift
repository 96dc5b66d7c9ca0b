import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockCore
import Testing

/// `Range` requests on file, data and text answers, as a `URLSession` client sees them through
/// each door: the slice with `206`, `416` past the end, `If-Range` sending the whole answer
/// when the validator changed.
@Suite("Range requests through both doors")
struct RangeParityTests {
    static let script = #"""
    mock.get("/text", mock.text("0123456789abcdefghij", { headers = { ETag = '"v1"', ["Last-Modified"] = "Wed, 21 Oct 2015 07:28:00 GMT" } }))
    mock.get("/json", { digits = "0123456789" })
    mock.post("/text", mock.text("0123456789"))
    """#

    @Test("bytes=a-b, a- and -n answer 206 with Content-Range and the slice", arguments: Door.allCases)
    func slices(door: Door) async throws {
        try await Served.serving(Self.script, door: door) { served in
            let whole = try await served.fetch("/text")
            #expect(whole.status == 200)
            #expect(whole.body == "0123456789abcdefghij")
            #expect(whole.headers["accept-ranges"] == "bytes")
            for (range, slice, contentRange) in [("bytes=2-5", "2345", "bytes 2-5/20"), ("bytes=15-", "fghij", "bytes 15-19/20"),
                                                 ("bytes=-3", "hij", "bytes 17-19/20"), ("bytes=18-100", "ij", "bytes 18-19/20"),
                                                 ("bytes=-50", "0123456789abcdefghij", "bytes 0-19/20")] {
                let reply = try await served.fetch("/text", headers: ["Range": range])
                #expect(reply.status == 206, "\(range)")
                #expect(reply.body == slice, "\(range)")
                #expect(reply.headers["content-range"] == contentRange, "\(range)")
                #expect(reply.headers["content-length"] == String(slice.utf8.count), "\(range)")
                #expect(reply.contentType == "text/plain; charset=utf-8")
            }
            // The journal records what was answered.
            #expect(served.moonmock.requests.last?.status == 206)
        }
    }

    @Test("a range past the end answers 416 with bytes */length", arguments: Door.allCases)
    func unsatisfiable(door: Door) async throws {
        try await Served.serving(Self.script, door: door) { served in
            for range in ["bytes=20-", "bytes=99-120", "bytes=-0"] {
                let reply = try await served.fetch("/text", headers: ["Range": range])
                #expect(reply.status == 416, "\(range)")
                #expect(reply.headers["content-range"] == "bytes */20", "\(range)")
                #expect(reply.body.isEmpty)
            }
        }
    }

    @Test("If-Range: the slice while the validator holds, the whole answer once it changed", arguments: Door.allCases)
    func ifRange(door: Door) async throws {
        try await Served.serving(Self.script, door: door) { served in
            let same = try await served.fetch("/text", headers: ["Range": "bytes=0-1", "If-Range": "\"v1\""])
            #expect(same.status == 206)
            #expect(same.body == "01")
            let date = try await served.fetch("/text", headers: ["Range": "bytes=0-1", "If-Range": "Wed, 21 Oct 2015 07:28:00 GMT"])
            #expect(date.status == 206)
            for stale in ["\"v2\"", "W/\"v1\"", "Thu, 22 Oct 2015 07:28:00 GMT"] {
                let reply = try await served.fetch("/text", headers: ["Range": "bytes=0-1", "If-Range": stale])
                #expect(reply.status == 200, "\(stale)")
                #expect(reply.body == "0123456789abcdefghij")
            }
        }
    }

    @Test("JSON, other methods, several ranges and other units get the whole answer", arguments: Door.allCases)
    func whole(door: Door) async throws {
        try await Served.serving(Self.script, door: door) { served in
            let json = try await served.fetch("/json", headers: ["Range": "bytes=0-1"])
            #expect(json.status == 200)
            #expect(json.headers["accept-ranges"] == nil)
            let post = try await served.fetch("/text", method: "POST", body: "x", headers: ["Range": "bytes=0-1"])
            #expect(post.status == 200)
            #expect(post.body == "0123456789")
            for range in ["bytes=0-1,4-5", "items=0-1", "bytes=5-2", "bytes=x-"] {
                let reply = try await served.fetch("/text", headers: ["Range": range])
                #expect(reply.status == 200, "\(range)")
                #expect(reply.body.count == 20)
            }
        }
    }

    @Test("Swift stubs: .file, .text and .http with a body offer ranges; JSON does not")
    func swiftStubs() async throws {
        let moonmock = Moonmock()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-range-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("movie.bin")
        try Data((0..<200).map { UInt8($0) }).write(to: file)
        moonmock.stub(.path("/file"), .file(file))
        moonmock.stub(.path("/data"), .http(body: Data("abcdef".utf8)))
        moonmock.stub(.path("/json"), .json(["a": 1]))
        let session = moonmock.makeSession()
        var request = URLRequest(url: URL(string: "https://cdn.example.test/file")!)
        request.setValue("bytes=100-103", forHTTPHeaderField: "Range")
        let (data, response) = try await session.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 206)
        #expect([UInt8](data) == [100, 101, 102, 103])
        #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Range") == "bytes 100-103/200")
        request.url = URL(string: "https://cdn.example.test/data")!
        request.setValue("bytes=-2", forHTTPHeaderField: "Range")
        let (tail, _) = try await session.data(for: request)
        #expect(String(decoding: tail, as: UTF8.self) == "ef")
        request.url = URL(string: "https://cdn.example.test/json")!
        let (json, jsonResponse) = try await session.data(for: request)
        #expect((jsonResponse as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: json, as: UTF8.self) == #"{"a":1}"#)
    }
}
