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
        let outcome = try await CLIRunner.run(
            ["thumbnail"] + inputs + [
                bad.path, "--output", output.path,
                "--max-pixel-size", "300", "--json", "--jobs", "2"
            ])
        #expect(outcome.status == 1)
        // In JSON mode the error is a JSON line in the file's place, and stderr stays empty.
        #expect(outcome.stderr.isEmpty, "\(outcome.stderr)")
        let failures = outcome.jsonLines.filter { $0["error"] != nil }
        #expect(failures.count == 1 && failures.first?["input"] as? String == bad.path)
        #expect(outcome.jsonLines.map { $0["input"] as? String } == inputs + [bad.path])
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

    @Test("WebP in and out: inspect reads a WebP header; thumbnail --format webp writes WebP at 79 or at --quality")
    func webp() async throws {
        let directory = try TemporaryDirectory()
        let rotated = WebPFixtures.directory.appendingPathComponent("kite-orientation6.webp").path
        let inspected = try await CLIRunner.run(["inspect", rotated])
        let line = try #require(inspected.jsonLines.first)
        #expect(inspected.status == 0 && line["format"] as? String == "webp" && line["orientation"] as? Int == 6)
        #expect(line["width"] as? Int == 480 && line["displayWidth"] as? Int == 300 && line["hasAlpha"] as? Bool == false)
        let kite = CLIRunner.samples.appendingPathComponent("Kite.jpg").path
        for (name, quality) in [("default", [String]()), ("q30", ["--quality", "30"])] {
            let output = directory.url.appendingPathComponent(name).path
            let outcome = try await CLIRunner.run(["thumbnail", kite, rotated, "--output", output, "--size", "200x200", "--format", "webp"] + quality)
            #expect(outcome.status == 0, "\(outcome.stderr)")
        }
        let made = try Data(contentsOf: directory.url.appendingPathComponent("default/Kite.webp"))
        let upright = try ImageDecoder.header(of: Data(contentsOf: directory.url.appendingPathComponent("default/kite-orientation6.webp")))
        #expect(try ImageDecoder.header(of: made).format == .webp && (upright.width, upright.height) == (125, 200))
        let low = try Data(contentsOf: directory.url.appendingPathComponent("q30/Kite.webp"))
        let reference = try ImageEncoder.webp(
            try ImageDecoder(options: DecodingOptions(resize: .fit(width: 200, height: 200))).decode(Data(contentsOf: URL(fileURLWithPath: kite))))
        #expect(made == reference, "the default quality is WebPEncodingOptions' 79")
        #expect(low.count < made.count)
    }

    @Test("HEIC and AVIF in: inspect and thumbnail read them upright; --format avif writes AVIF; --format heic is refused before any file is read")
    func heif() async throws {
        let directory = try TemporaryDirectory()
        let rotated = HEIFFixtures.directory.appendingPathComponent("small-irot-1.heic").path
        let avif = HEIFFixtures.directory.appendingPathComponent("kite.avif").path
        let inspected = try await CLIRunner.run(["inspect", rotated, avif])
        #expect(inspected.status == 0 && inspected.jsonLines.map { $0["format"] as? String } == ["heic", "avif"])
        #expect(inspected.jsonLines.first?["width"] as? Int == 60 && inspected.jsonLines.first?["height"] as? Int == 96)
        let outcome = try await CLIRunner.run(["thumbnail", rotated, avif, "--output", directory.url.path, "--size", "48x48", "--json"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let sizes = try ["small-irot-1.jpg", "kite.jpg"].map { name in
            let header = try ImageDecoder.header(of: Data(contentsOf: directory.file(name)))
            return [header.width, header.height]
        }
        #expect(sizes == [[30, 48], [48, 30]])
        let written = try await CLIRunner.run([
            "thumbnail", rotated, "--output", directory.url.appendingPathComponent("avif").path, "--size", "48x48", "--format", "avif"
        ])
        let avifHeader = try ImageDecoder.header(of: Data(contentsOf: directory.url.appendingPathComponent("avif/small-irot-1.avif")))
        #expect(written.status == 0 && avifHeader.format == .avif && (avifHeader.width, avifHeader.height) == (30, 48))
        let refused = try await CLIRunner.run(["thumbnail", avif, "--output", directory.url.path, "--format", "heic"])
        #expect(refused.status != 0 && refused.stderr.contains("read, not written"))
    }

    /// Flat colour squares (each `size` px) in a Display P3 PNG, and transicc's sRGB values.
    static func displayP3Patches(size: Int) throws -> (png: Data, expected: [[UInt8]], profile: [UInt8]) {
        let colors: [[UInt8]] = [[230, 40, 60], [255, 128, 0], [40, 160, 60], [30, 80, 200]]
        var pixels: [UInt8] = []
        for y in 0..<(2 * size) { for x in 0..<(2 * size) { pixels += colors[(y / size) * 2 + x / size] } }
        let profile = try ColorFixtures.profile("DisplayP3.icc")
        let bitmap = try Bitmap(width: 2 * size, height: 2 * size, format: .rgb, pixels: pixels, iccProfile: profile)
        return (try ImageEncoder.png(bitmap), try ColorFixtures.transicc(colors, from: "DisplayP3.icc"), profile)
    }

    /// The centres of the four squares.
    static func quadrantCentres(_ bitmap: Bitmap) -> [[UInt8]] {
        [(1, 1), (3, 1), (1, 3), (3, 3)].map { Array(bitmap.pixel(x: $0.0 * bitmap.width / 4, y: $0.1 * bitmap.height / 4)) }
    }

    @Test("thumbnail converts a Display P3 photo to sRGB with no profile; --keep-profile keeps values and profile")
    func displayP3Thumbnail() async throws {
        let directory = try TemporaryDirectory()
        let (png, expected, profile) = try Self.displayP3Patches(size: 200)
        try png.write(to: directory.file("p3.png"))
        let converted = try await CLIRunner.run([
            "thumbnail", directory.file("p3.png").path, "--output", directory.file("srgb").path,
            "--max-pixel-size", "200"
        ])
        #expect(converted.status == 0, "\(converted.stderr)")
        let output = try ImageDecoder(options: DecodingOptions(colorManagement: .preserveSource))
            .decode(Data(contentsOf: directory.file("srgb/p3.jpg")))
        #expect(output.iccProfile == nil && output.width == 200)
        for (got, want) in zip(Self.quadrantCentres(output), expected) {
            #expect(zip(got, want).allSatisfy { abs(Int($0) - Int($1)) <= 4 }, "thumbnail \(got), transicc \(want)")
        }
        let kept = try await CLIRunner.run([
            "thumbnail", directory.file("p3.png").path, "--output", directory.file("p3").path,
            "--max-pixel-size", "200", "--keep-profile"
        ])
        #expect(kept.status == 0)
        let keptOutput = try ImageDecoder(options: DecodingOptions(colorManagement: .preserveSource))
            .decode(Data(contentsOf: directory.file("p3/p3.jpg")))
        #expect(keptOutput.iccProfile == profile)
        for (got, want) in zip(Self.quadrantCentres(keptOutput), [[230, 40, 60], [255, 128, 0], [40, 160, 60], [30, 80, 200]] as [[UInt8]]) {
            #expect(zip(got, want).allSatisfy { abs(Int($0) - Int($1)) <= 4 }, "kept \(got), stored \(want)")
        }
    }
}

@Suite("CLI: animated sources")
struct AnimatedSourceCLITests {
    @Test("inspect reports frames: 1 for a still image, an animated GIF's and WebP's count")
    func inspectFrames() async throws {
        let files = [
            CLIRunner.samples.appendingPathComponent("Kite.jpg").path, GIFFixtures.directory.appendingPathComponent("pan.gif").path,
            WebPFixtures.directory.appendingPathComponent("kite-animated.webp").path
        ]
        let outcome = try await CLIRunner.run(["inspect"] + files)
        #expect(outcome.status == 0)
        let lines = outcome.jsonLines
        try #require(lines.count == 3)
        #expect(lines[0]["frames"] as? Int == 1)
        #expect(lines[1]["format"] as? String == "gif" && lines[1]["frames"] as? Int == 12)
        #expect(lines[1]["width"] as? Int == 112 && lines[1]["height"] as? Int == 80)
        let webp = try ImageDecoder.header(of: WebPFixtures.data("kite-animated.webp"))
        #expect(lines[2]["frames"] as? Int == webp.frameCount && webp.frameCount > 1)
    }

    @Test("thumbnail: WebP of a GIF is animated (--max-frames keeps the first N), --first-frame and JPEG are stills")
    func thumbnailAnimation() async throws {
        let directory = try TemporaryDirectory()
        let gif = GIFFixtures.directory.appendingPathComponent("pan.gif").path
        func run(_ name: String, _ extra: [String]) async throws -> ImageHeader {
            let output = directory.url.appendingPathComponent(name)
            let outcome = try await CLIRunner.run(["thumbnail", gif, "--output", output.path, "--size", "56x56"] + extra)
            #expect(outcome.status == 0, "\(outcome.stderr)")
            let file = try #require(try FileManager.default.contentsOfDirectory(atPath: output.path).first)
            return try ImageDecoder.header(of: Data(contentsOf: output.appendingPathComponent(file)))
        }
        let animated = try await run("all", ["--format", "webp"])
        #expect(animated.format == .webp && animated.frameCount == 12 && animated.width == 56)
        #expect(try await run("some", ["--format", "webp", "--max-frames", "5"]).frameCount == 5)
        #expect(try await run("first", ["--format", "webp", "--first-frame"]).frameCount == 1)
        let jpeg = try await run("jpeg", [])
        #expect(jpeg.format == .jpeg && jpeg.frameCount == 1 && jpeg.width == 56)
        let refused = try await CLIRunner.run(["thumbnail", gif, "--output", directory.url.path, "--max-frames", "0"])
        #expect(refused.status == 64 && refused.stderr.contains("--max-frames"))
    }

    @Test("thumbnail: a cut GIF keeps its whole frames and says so, on stderr or in its JSON line")
    func truncatedAnimation() async throws {
        let directory = try TemporaryDirectory()
        let gif = GIFFixtures.directory.appendingPathComponent("truncated.gif").path
        let warning = "the file ends inside frame 3: the 2 whole frames before it kept"
        let plain = try await CLIRunner.run(["thumbnail", gif, "--output", directory.url.path, "--format", "webp"])
        #expect(plain.status == 0 && plain.stderr == "image-engine: \(gif): warning: \(warning)\n", "\(plain.stderr)")
        let json = try await CLIRunner.run(["thumbnail", gif, "--output", directory.url.path, "--format", "webp", "--json"])
        let line = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(json.status == 0 && json.stderr.isEmpty && line["frames"] as? Int == 2 && line["warnings"] as? [String] == [warning])
        let written = try ImageDecoder.header(of: Data(contentsOf: directory.url.appendingPathComponent("truncated.webp")))
        #expect(written.frameCount == 2)
    }
}
