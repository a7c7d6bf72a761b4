import Foundation
import ImageCodec
import ImageServer
import Testing
import TestSupport

@Suite("CLI: fetch")
struct FetchCommandTests {
    static func server() async throws -> ImageServer {
        let server = try await ImageServer.start()
        let kite = try SmallPhotos.data("kite.jpg")
        let calla = try SmallPhotos.data("calla.png")
        server.serve("a/photo.jpg", ImageServer.Resource(data: kite))
        server.serve("b/photo.jpeg", ImageServer.Resource(data: kite))
        server.serve("flower.png", ImageServer.Resource(data: calla, contentType: "image/png"))
        return server
    }

    @Test("JSON lines in argument order; a repeated URL is one request and one file; repeated names get -2; alpha gives PNG")
    func outputs() async throws {
        let server = try await Self.server()
        let directory = try TemporaryDirectory()
        let urls = [server.url("a/photo.jpg"), server.url("b/photo.jpeg"), server.url("flower.png"), server.url("a/photo.jpg")].map(\.absoluteString)
        let outcome = try await CLIRunner.run(["fetch"] + urls + ["--output", directory.url.path, "--max-pixel-size", "200", "--json"])
        #expect(outcome.status == 0, "\(outcome.stderr) \(outcome.stdout)")
        let lines = outcome.jsonLines
        #expect(lines.map { $0["url"] as? String } == urls)
        #expect(
            lines.map { ($0["output"] as? String).map { URL(fileURLWithPath: $0).lastPathComponent } } == [
                "photo.jpg", "photo-2.jpg", "flower.png", "photo.jpg"
            ])
        #expect(lines.allSatisfy { Set($0.keys) == ["url", "output", "width", "height", "source", "bytesDownloaded", "milliseconds"] })
        #expect(lines.allSatisfy { $0["source"] as? String == "network" })
        #expect(lines[0]["bytesDownloaded"] as? Int == lines[3]["bytesDownloaded"] as? Int)
        #expect(server.requests("a/photo.jpg") == 1)
        #expect(directory.contents == ["flower.png", "photo-2.jpg", "photo.jpg"])
        let written = try ImageDecoder.header(of: Data(contentsOf: directory.file("flower.png")))
        #expect(written.hasAlpha && max(written.width, written.height) == 200)
        #expect(lines[2]["width"] as? Int == written.width && lines[2]["height"] as? Int == written.height)
    }

    @Test("--cache-dir: the next run is served from disk without requests; --reload downloads again")
    func cacheDirectory() async throws {
        let server = try await Self.server()
        let directory = try TemporaryDirectory()
        let cache = directory.url.appendingPathComponent("cache").path
        let url = server.url("a/photo.jpg").absoluteString
        let arguments = ["fetch", url, "--output", directory.url.appendingPathComponent("out").path, "--cache-dir", cache, "--json"]
        #expect(try await CLIRunner.run(arguments).jsonLines.first?["source"] as? String == "network")
        #expect(try await CLIRunner.run(arguments).jsonLines.first?["source"] as? String == "disk")
        #expect(server.requests("a/photo.jpg") == 1)
        let reloaded = try await CLIRunner.run(arguments + ["--reload"]).jsonLines.first
        #expect(reloaded?["source"] as? String == "network" && (reloaded?["bytesDownloaded"] as? Int ?? 0) > 0)
        #expect(server.requests("a/photo.jpg") == 2)
        let stats = try await CLIRunner.run(["cache", "--dir", cache, "stats"])
        #expect(stats.stdout.contains("\"count\" : 1"))
    }

    @Test("failures: a JSON error line (or one stderr line), the others still saved, exit status 1")
    func failures() async throws {
        let server = try await Self.server()
        server.setFault("broken.jpg", .status(404))
        let directory = try TemporaryDirectory()
        let urls = [server.url("broken.jpg"), server.url("a/photo.jpg")].map(\.absoluteString)
        let json = try await CLIRunner.run(["fetch"] + urls + ["--output", directory.url.path, "--json"])
        #expect(json.status == 1, "\(json.stderr)")
        let lines = json.jsonLines
        try #require(lines.count == 2, "stdout: \(json.stdout) stderr: \(json.stderr)")
        #expect(lines[0]["error"] as? String == "HTTP status 404" && Set(lines[0].keys) == ["url", "error"], "\(lines[0])")
        #expect(lines[1]["source"] as? String == "network")
        #expect(directory.contents == ["photo.jpg"])
        let plain = try await CLIRunner.run(["fetch", urls[0], "--output", directory.url.path])
        #expect(plain.status == 1 && plain.stdout.isEmpty && plain.stderr == "image-engine: \(urls[0]): HTTP status 404\n")
    }

    @Test("--timeout bounds the whole download: a server dripping a byte at a time fails in time")
    func timeout() async throws {
        let server = try await Self.server()
        server.setFault("slow.jpg", .slowDrip(interval: .milliseconds(200)))
        let directory = try TemporaryDirectory()
        let started = Date()
        let outcome = try await CLIRunner.run([
            "fetch", server.url("slow.jpg").absoluteString, "--output", directory.url.path,
            "--json", "--timeout", "2"
        ])
        #expect(Date().timeIntervalSince(started) < 20)
        #expect(outcome.status == 1)
        #expect((outcome.jsonLines.first?["error"] as? String)?.contains("timed out") == true, "\(outcome.stdout)")
        #expect(directory.contents.isEmpty)
    }

    @Test(
        "usage mistakes exit 64",
        arguments: [
            ["fetch", "not a url", "--output", "/tmp/x"], ["fetch", "file:///etc/passwd", "--output", "/tmp/x"],
            ["fetch", "http://127.0.0.1:1/a.jpg", "--output", "/tmp/x", "--timeout", "0"],
            ["fetch", "http://127.0.0.1:1/a.jpg"]
        ])
    func usage(_ arguments: [String]) async throws {
        let outcome = try await CLIRunner.run(arguments)
        #expect(outcome.status == 64, "\(outcome.stderr)")
    }

    @Test("--size/--mode/--gravity: two sizes of one URL are one request, and each file has its size")
    func resize() async throws {
        let server = try await Self.server()
        let url = server.url("a/photo.jpg").absoluteString // 480×300
        let directory = try TemporaryDirectory()
        let fill = try await CLIRunner.run([
            "fetch", url, "--output", directory.file("fill").path, "--cache-dir", directory.file("cache").path,
            "--size", "120x120", "--mode", "fill", "--gravity", "east", "--json"
        ])
        #expect(fill.status == 0, "\(fill.stderr)")
        #expect(fill.jsonLines.first?["width"] as? Int == 120 && fill.jsonLines.first?["height"] as? Int == 120)
        let fit = try await CLIRunner.run([
            "fetch", url, "--output", directory.file("fit").path, "--cache-dir", directory.file("cache").path,
            "--size", "0x60", "--json"
        ])
        #expect(fit.jsonLines.first?["width"] as? Int == 96 && fit.jsonLines.first?["height"] as? Int == 60)
        #expect(fit.jsonLines.first?["source"] as? String == "disk")
        let header = try ImageDecoder.header(of: Data(contentsOf: directory.file("fill/photo.jpg")))
        #expect(header.width == 120 && header.height == 120)
        #expect(server.requests("a/photo.jpg") == 1)
    }

    @Test("a name taken from the URL never becomes a path")
    func hostileNames() async throws {
        let server = try await Self.server()
        // The client's last path component, decoded, is "../escape.jpg".
        server.serveEverywhereElse(ImageServer.Resource(data: try SmallPhotos.data("grey.jpg")))
        let root = try TemporaryDirectory()
        let output = root.url.appendingPathComponent("out")
        let url = "http://127.0.0.1:\(server.port)/a/..%2Fescape.jpg"
        let outcome = try await CLIRunner.run(["fetch", url, "--output", output.path, "--max-pixel-size", "50", "--json"])
        #expect(outcome.status == 0, "\(outcome.stderr) \(outcome.stdout)")
        #expect(root.contents == ["out"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: output.path) == ["_escape.jpg"])
    }
}
