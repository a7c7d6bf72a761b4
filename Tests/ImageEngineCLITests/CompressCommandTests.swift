import Foundation
import ImageCodec
import Testing
import TestSupport

@Suite("CLI: compress")
struct CompressCommandTests {
    static func photos(in directory: TemporaryDirectory) throws -> [String] {
        // Small real photos keep this quick in a debug build.
        try ["Kite.jpg", "Grey.jpg", "calla.png"].map { name in
            let bitmap = try ImageDecoder(options: DecodingOptions(maxPixelSize: 400)).decode(
                Data(contentsOf: CLIRunner.samples.appendingPathComponent(name)))
            let path = directory.file(name).path
            try (name.hasSuffix(".png") ? ImageEncoder.png(bitmap) : ImageEncoder.jpeg(bitmap, options: JPEGEncodingOptions(quality: 95)))
                .write(to: URL(fileURLWithPath: path))
            return path
        }
    }

    @Test("--json prints budget, total and per-image fields; files and the multipart body are written")
    func json() async throws {
        let directory = try TemporaryDirectory()
        let inputs = try Self.photos(in: directory)
        let output = directory.url.appendingPathComponent("out")
        let body = directory.file("request.body")
        let outcome = try await CLIRunner.run(["compress"] + inputs + ["--output", output.path, "--budget", "40KB", "--max-pixel-size", "400",
                                                                 "--min-pixel-size", "200", "--json", "--multipart", body.path,
                                                                 "--field", #"params={"title":"chair"}"#])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any])
        #expect(document["budget"] as? Int == 40_000)
        let total = try #require(document["total"] as? Int)
        #expect(total <= 40_000)
        let images = try #require(document["images"] as? [[String: Any]])
        #expect(images.count == 3)
        var sum = 0
        for image in images {
            for key in ["input", "output", "width", "height", "quality", "bytes", "score"] { #expect(image[key] != nil, "missing \(key)") }
            let path = try #require(image["output"] as? String)
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(data.count == image["bytes"] as? Int)
            sum += data.count
            #expect(try ImageDecoder.header(of: data).width == image["width"] as? Int)
        }
        #expect(sum == total)
        #expect(directory.contents.contains("request.body"))
        let text = String(decoding: try Data(contentsOf: body), as: UTF8.self)
        #expect(text.contains(#"name="params""#) && text.contains(#"filename="Kite.jpg""#) && text.contains(#"{"title":"chair"}"#))
    }

    @Test("an unreachable budget exits non-zero with a clear message and writes nothing")
    func unreachable() async throws {
        let directory = try TemporaryDirectory()
        let inputs = try Self.photos(in: directory)
        let output = directory.url.appendingPathComponent("out")
        let outcome = try await CLIRunner.run(["compress"] + inputs + ["--output", output.path, "--budget", "1KiB", "--max-pixel-size", "400",
                                                                 "--min-pixel-size", "200"])
        #expect(outcome.status != 0)
        #expect(outcome.stderr.contains("cannot be met") && outcome.stderr.contains("1024"))
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    @Test("a bad input exits non-zero naming the file")
    func badInput() async throws {
        let directory = try TemporaryDirectory()
        let bad = directory.file("broken.jpg")
        try Data([0xFF, 0xD8, 0xFF, 0x00, 0x01]).write(to: bad)
        let outcome = try await CLIRunner.run(["compress", bad.path, "--output", directory.url.appendingPathComponent("out").path])
        #expect(outcome.status != 0 && outcome.stderr.contains("broken.jpg"))
        #expect(try await CLIRunner.run(["compress", bad.path, "--output", "x", "--budget", "lots"]).status != 0)
    }
}
