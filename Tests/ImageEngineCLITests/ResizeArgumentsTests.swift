import Foundation
import ImageCodec
import TestSupport
import Testing

/// `--size WxH [--mode] [--gravity] [--enlarge]` on `thumbnail` (and `fetch`, in
/// FetchCommandTests): contracted names, exact output sizes, and a usage error for each bad value.
@Suite("CLI: resize options")
struct ResizeArgumentsTests {
    static let kite = SmallPhotos.directory.appendingPathComponent("kite.jpg").path // 480×300

    /// Runs `thumbnail` on one input; the JSON line's size and the written file (read before
    /// its temporary directory goes).
    static func thumbnail(_ input: String, _ options: [String]) async throws -> (outcome: CLIRunner.Outcome, width: Int?, height: Int?, file: Data?) {
        let directory = try TemporaryDirectory()
        let outcome = try await CLIRunner.run(["thumbnail", input, "--output", directory.url.path, "--json"] + options)
        let line = outcome.jsonLines.first
        var file: Data?
        if let path = line?["output"] as? String {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let header = try ImageDecoder.header(of: data)
            // The file's size is what the JSON says.
            #expect(line?["width"] as? Int == header.width && line?["height"] as? Int == header.height)
            file = data
        }
        return (outcome, line?["width"] as? Int, line?["height"] as? Int, file)
    }

    @Test(
        "each mode makes the size it promises",
        arguments: [
            (["--size", "200x200"], 200, 125),
            (["--size", "200x200", "--mode", "fit"], 200, 125),
            (["--size", "200x0"], 200, 125),
            (["--size", "0x100"], 160, 100),
            (["--size", "200x200", "--mode", "fill"], 200, 200),
            (["--size", "200x200", "--mode", "fill", "--gravity", "focus:0.1,0.9"], 200, 200),
            (["--size", "200x200", "--mode", "fill-down"], 200, 200),
            (["--size", "200x200", "--mode", "force"], 200, 200),
            (["--size", "600x600", "--mode", "fill"], 480, 300),
            (["--size", "600x600", "--mode", "fill-down"], 300, 300),
            (["--size", "600x600", "--mode", "fill", "--enlarge"], 600, 600),
            (["--size", "960x0", "--enlarge"], 960, 600),
            (["--size", "960x960"], 480, 300),
            (["--max-pixel-size", "160"], 160, 100),
            // Scaled to 320×200 by the minimum, then cropped to the box.
            (["--size", "100x100", "--min-size", "320x0"], 100, 100),
            (["--size", "200x0", "--min-size", "0x150"], 200, 150),
            (["--min-size", "960x0"], 960, 600),
            (["--min-size", "100x100"], 480, 300),
            ([], 480, 300)
        ])
    func sizes(options: [String], width: Int, height: Int) async throws {
        let result = try await Self.thumbnail(Self.kite, options)
        #expect(result.outcome.status == 0, "\(options): \(result.outcome.stderr)")
        #expect(result.width == width && result.height == height, "\(options)")
    }

    @Test("--fast-shrink-on-load: the same sizes, other pixels (kite into 100 px: 2/8 instead of 3/8)")
    func fastShrinkOnLoad() async throws {
        for options in [["--size", "100x100"], ["--size", "100x100", "--mode", "fill"]] {
            let quality = try await Self.thumbnail(Self.kite, options + ["--format", "png"])
            let fast = try await Self.thumbnail(Self.kite, options + ["--format", "png", "--fast-shrink-on-load"])
            #expect(fast.outcome.status == 0, "\(fast.outcome.stderr)")
            #expect(fast.width == quality.width && fast.height == quality.height, "\(options)")
            let (sharp, soft) = (try ImageDecoder().decode(try #require(quality.file)), try ImageDecoder().decode(try #require(fast.file)))
            #expect(sharp.pixels != soft.pixels, "\(options): the flag changed nothing")
        }
    }

    @Test("--gravity keeps the named edge: the left and right thirds of a banded image")
    func gravity() async throws {
        let directory = try TemporaryDirectory()
        let colours: [[UInt8]] = [[255, 0, 0], [0, 255, 0], [0, 0, 255]]
        var pixels: [UInt8] = []
        for _ in 0..<100 { for x in 0..<300 { pixels += colours[x / 100] } }
        let banded = directory.file("banded.png")
        try ImageEncoder.png(try Bitmap(width: 300, height: 100, format: .rgb, pixels: pixels)).write(to: banded)
        for (gravity, colour) in [
            ("west", colours[0]), ("centre", colours[1]), ("center", colours[1]), ("north-east", colours[2]),
            ("focus:0.95,0.5", colours[2])
        ] {
            let result = try await Self.thumbnail(banded.path, ["--size", "50x50", "--mode", "fill", "--gravity", gravity, "--format", "png"])
            let file = try #require(result.file, "\(gravity): \(result.outcome.stderr)")
            let bitmap = try ImageDecoder().decode(file)
            #expect(Array(bitmap.pixel(x: 25, y: 25)) == colour && Array(bitmap.pixel(x: 1, y: 1)) == colour, "\(gravity)")
        }
    }

    @Test(
        "a bad size, mode or gravity, or a conflict, exits 64 and the first stderr line names the option",
        arguments: [
            (["--size", "abc"], "--size"), (["--size", "400"], "--size"), (["--size", "400x"], "--size"), (["--size", "x400"], "--size"),
            (["--size", "0x0"], "--size"), (["--size=-5x10"], "--size"), (["--size", "4.5x10"], "--size"), (["--size", "100001x10"], "--size"),
            (["--size", "0x400", "--mode", "fill"], "--size"), (["--size", "400x0", "--mode", "force"], "--size"),
            (["--size", "400x0", "--mode", "fill-down"], "--size"),
            (["--size", "400x400", "--mode", "stretch"], "--mode"), (["--size", "400x400", "--mode", "fill", "--gravity", "up"], "--gravity"),
            (["--size", "400x400", "--mode", "fill", "--gravity", "focus:2,0"], "--gravity"),
            (["--size", "400x400", "--mode", "fill", "--gravity", "focus:0.5"], "--gravity"),
            (["--size", "400x400", "--max-pixel-size", "400"], "--max-pixel-size"), (["--mode", "fill"], "--mode"),
            (["--max-pixel-size", "400", "--mode", "fill"], "--mode"), (["--max-pixel-size", "0"], "--max-pixel-size"),
            (["--min-size", "axb"], "--min-size"), (["--min-size", "-1x0"], "--min-size"), (["--min-size", "200000x0"], "--min-size"),
            (["--size", "9x9", "--mode", "force", "--min-size", "10x10"], "--min-size")
        ])
    func usage(options: [String], option: String) async throws {
        let directory = try TemporaryDirectory()
        for command in ["thumbnail", "fetch"] {
            let input = command == "thumbnail" ? Self.kite : "http://127.0.0.1:9/x.jpg"
            let outcome = try await CLIRunner.run([command, input, "--output", directory.file("out").path] + options)
            #expect(outcome.status == 64, "\(command) \(options): \(outcome.stderr)")
            let first = outcome.stderr.split(separator: "\n").first.map(String.init) ?? ""
            #expect(first.contains(option), "\(command) \(options): \(first)")
            #expect(directory.contents.isEmpty, "a usage mistake writes nothing")
        }
    }
}
