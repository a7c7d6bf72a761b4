import Foundation
import ImageCodec
import TestSupport
import Testing

@Suite("CLI: inspect and thumbnail")
struct InspectAndThumbnailTests {
    @Test("inspect prints the contracted fields per file and exits 1 after a bad file")
    func inspect() async throws {
        let directory = try TemporaryDirectory()
        let bad = directory.file("broken.jpg")
        try Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00]).write(to: bad)
        let kite = CLIRunner.samples.appendingPathComponent("Kite.jpg").path
        let outcome = try await CLIRunner.run(["inspect", kite, bad.path])
        #expect(outcome.status == 1)
        let lines = outcome.jsonLines
        try #require(lines.count == 2)
        let good = lines[0]
        for key in ["file", "format", "width", "height", "orientation", "displayWidth", "displayHeight", "hasAlpha", "bitDepth", "progressive"] {
            #expect(good[key] != nil, "missing \(key)")
        }
        #expect(good["file"] as? String == kite)
        #expect(good["format"] as? String == "jpeg")
        #expect(good["width"] as? Int == 2560 && good["height"] as? Int == 1600)
        #expect(good["orientation"] as? Int == 1 && good["hasAlpha"] as? Bool == false)
        #expect(lines[1]["file"] as? String == bad.path)
        #expect((lines[1]["error"] as? String)?.contains("truncated") == true)
        #expect(try await CLIRunner.run(["inspect", kite]).status == 0)
    }

    @Test("thumbnail writes resized files, reports JSON, skips bad files and exits 1")
    func thumbnail() async throws {
        let directory = try TemporaryDirectory()
        let bad = directory.file("random.png")
        try Data((0..<500).map { UInt8(truncatingIfNeeded: $0 * 31) }).write(to: bad)
        let output = directory.url.appendingPathComponent("out")
        let inputs = ["Kite.jpg", "calla.png", "Grey.jpg"].map { CLIRunner.samples.appendingPathComponent($0).path }
        let outcome = try await CLIRunner.run(["thumbnail"] + inputs + [bad.path, "--output", output.path,
                                                                  "--max-pixel-size", "300", "--json", "--jobs", "2"])
        #expect(outcome.status == 1)
        #expect(outcome.stderr.contains(bad.path))
        let names = try FileManager.default.contentsOfDirectory(atPath: output.path).sorted()
        #expect(names == ["Grey.jpg", "Kite.jpg", "calla.jpg"])
        let results = outcome.jsonLines.filter { $0["output"] != nil }
        #expect(results.count == 3)
        for result in results {
            for key in ["input", "output", "width", "height", "bytes", "milliseconds"] { #expect(result[key] != nil, "missing \(key)") }
            let path = try #require(result["output"] as? String)
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(result["bytes"] as? Int == data.count)
            let header = try ImageDecoder.header(of: data)
            #expect(header.format == .jpeg && max(header.width, header.height) == 300)
            #expect(result["width"] as? Int == header.width && result["height"] as? Int == header.height)
        }
    }

    @Test("thumbnail without --max-pixel-size keeps the size; --format png writes PNG")
    func thumbnailOptions() async throws {
        let directory = try TemporaryDirectory()
        let input = CLIRunner.samples.appendingPathComponent("LadyBird.jpg").path
        #expect(try await CLIRunner.run(["thumbnail", input, "--output", directory.url.path, "--format", "png"]).status == 0)
        let header = try ImageDecoder.header(of: Data(contentsOf: directory.file("LadyBird.png")))
        #expect(header.format == .png && header.width == 2560 && header.height == 1600)
        let invalid = try await CLIRunner.run(["thumbnail", input, "--output", directory.url.path, "--quality", "0"])
        #expect(invalid.status != 0 && invalid.stderr.contains("quality"))
    }
}
