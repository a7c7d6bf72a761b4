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
        let outcome = try await CLIRunner.run(
            ["compress"] + inputs + [
                "--output", output.path, "--budget", "40KB", "--max-pixel-size", "400",
                "--min-pixel-size", "200", "--json", "--multipart", body.path,
                "--field", #"params={"title":"chair"}"#
            ])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        // A script reading the JSON may treat anything on stderr as a failure.
        #expect(outcome.stderr.isEmpty, "JSON mode printed to stderr: \(outcome.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any])
        #expect(document["budget"] as? Int == 40_000)
        let total = try #require(document["total"] as? Int)
        #expect(total <= 40_000)
        let images = try #require(document["images"] as? [[String: Any]])
        #expect(images.count == 3)
        var sum = 0
        for image in images {
            for key in ["input", "output", "width", "height", "quality", "bytes", "score", "ssimulacra2", "chroma", "chroma_quality"] {
                #expect(image[key] != nil, "missing \(key)")
            }
            let path = try #require(image["output"] as? String)
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            // `chroma` is what the file's sampling factors say: null for the gray photo.
            #expect(image["chroma"] as? String == JPEGSampling.chroma(of: data), "\(path)")
            #expect((image["chroma"] is NSNull) == path.hasSuffix("Grey.jpg"), "\(path)")
            // `chroma_quality` is the quality whose standard chroma table the file carries.
            if let chromaQuality = image["chroma_quality"] as? Int {
                let gray = try Bitmap(width: 8, height: 8, format: .rgb, pixels: [UInt8](repeating: 128, count: 192))
                // With the tenths of a step the budget's last step may add to both qualities.
                let fraction = try #require(image["quality_fraction"] as? Double)
                let standard = try ImageEncoder.jpeg(gray, options: JPEGEncodingOptions(quality: chromaQuality, qualityFraction: fraction))
                #expect(JPEGSegments.quantizationTables(data)[1] == JPEGSegments.quantizationTables(standard)[1], "\(path)")
            } else {
                #expect(image["chroma_quality"] is NSNull && image["chroma"] is NSNull, "\(path)")
            }
            let ssimulacra2 = try #require(image["ssimulacra2"] as? Double)
            #expect(ssimulacra2 > 10 && ssimulacra2 <= 100)
            #expect(data.count == image["bytes"] as? Int)
            sum += data.count
            #expect(try ImageDecoder.header(of: data).width == image["width"] as? Int)
        }
        #expect(sum == total)
        #expect(directory.contents.contains("request.body"))
        let text = String(decoding: try Data(contentsOf: body), as: UTF8.self)
        #expect(text.contains(#"name="params""#) && text.contains(#"filename="Kite.jpg""#) && text.contains(#"{"title":"chair"}"#))
    }

    @Test("--budget-includes-body fits the whole request body; by default the images alone are counted")
    func budgetIncludesBody() async throws {
        let directory = try TemporaryDirectory()
        let inputs = try Self.photos(in: directory)
        // A long text part: the framing and fields are several KB of a 40 KB budget.
        let title = "title=" + String(repeating: "a chair, ", count: 600)
        func run(_ name: String, _ extra: [String]) async throws -> (total: Int, body: Int, reported: Int?) {
            let body = directory.file("\(name).body")
            let outcome = try await CLIRunner.run(
                ["compress"] + inputs + [
                    "--output", directory.file(name).path, "--budget", "40KB", "--max-pixel-size", "400", "--min-pixel-size", "200",
                    "--json", "--multipart", body.path, "--field", title
                ] + extra)
            #expect(outcome.status == 0, "\(outcome.stderr)")
            let document = try #require(try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any])
            #expect(document["budget"] as? Int == 40_000)
            let size = try Data(contentsOf: body).count
            return (try #require(document["total"] as? Int), size, document["body_bytes"] as? Int)
        }
        let images = try await run("images", [])
        #expect(images.total <= 40_000 && images.body > 40_000, "the images fit, the body does not: \(images)")
        #expect(images.reported == images.body)
        let whole = try await run("whole", ["--budget-includes-body"])
        #expect(whole.body <= 40_000 && whole.reported == whole.body, "\(whole)")
        #expect(whole.total < images.total)
        // Framing and text alone over the budget: one line, exit 1, nothing written.
        let tight = try await CLIRunner.run(
            [
                "compress", inputs[0], "--output", directory.file("tight").path, "--budget", "5KB", "--multipart",
                directory.file("tight.body").path, "--field", title, "--budget-includes-body"
            ])
        #expect(tight.status == 1 && tight.stderr.contains("framing and text parts alone take"), "\(tight.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("tight.body").path))
        let usage = try await CLIRunner.run(["compress", inputs[0], "--output", directory.file("u").path, "--budget-includes-body"])
        #expect(usage.status == 64 && usage.stderr.contains("--budget-includes-body needs --multipart"))
    }

    @Test("--metric ssim keeps every JPEG 4:2:0; an unknown metric is a usage error naming --metric")
    func metric() async throws {
        let directory = try TemporaryDirectory()
        let inputs = try Self.photos(in: directory)
        let output = directory.url.appendingPathComponent("out")
        let outcome = try await CLIRunner.run(
            ["compress"] + inputs + [
                "--output", output.path, "--budget", "40KB", "--max-pixel-size", "400",
                "--min-pixel-size", "200", "--json", "--metric", "ssim"
            ])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any])
        let images = try #require(document["images"] as? [[String: Any]])
        #expect(images.map { $0["chroma"] as? String } == ["4:2:0", nil, "4:2:0"])
        let wrong = try await CLIRunner.run(["compress"] + inputs + ["--output", output.path, "--metric", "psnr"])
        #expect(wrong.status == 64 && wrong.stderr.contains("--metric"), "\(wrong.stderr)")
    }

    @Test("an unreachable budget exits non-zero with a clear message and writes nothing")
    func unreachable() async throws {
        let directory = try TemporaryDirectory()
        let inputs = try Self.photos(in: directory)
        let output = directory.url.appendingPathComponent("out")
        let outcome = try await CLIRunner.run(
            ["compress"] + inputs + [
                "--output", output.path, "--budget", "1KiB", "--max-pixel-size", "400",
                "--min-pixel-size", "200"
            ])
        #expect(outcome.status != 0)
        #expect(outcome.stderr.contains("cannot be met") && outcome.stderr.contains("1024"))
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    @Test("every bad input is named, one line each; nothing is written")
    func badInputs() async throws {
        let directory = try TemporaryDirectory()
        let good = try Self.photos(in: directory)[0]
        let broken = directory.file("broken.jpg")
        try Data([0xFF, 0xD8, 0xFF, 0x00, 0x01]).write(to: broken)
        let missing = directory.file("missing.jpg").path
        let output = directory.url.appendingPathComponent("out")
        let outcome = try await CLIRunner.run(["compress", broken.path, good, missing, "--output", output.path])
        #expect(outcome.status == 1)
        let lines = outcome.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(outcome.stderr)")
        #expect(lines.first?.hasPrefix("image-engine: \(broken.path): ") == true)
        #expect(lines.last == "image-engine: \(missing): No such file or directory")
        #expect(!FileManager.default.fileExists(atPath: output.path))
        // In JSON mode: one record on stdout listing both, nothing on stderr.
        let json = try await CLIRunner.run(["compress", broken.path, good, missing, "--output", output.path, "--json"])
        #expect(json.status == 1 && json.stderr.isEmpty)
        let record = try #require(json.jsonLines.first)
        #expect(json.jsonLines.count == 1 && (record["error"] as? String)?.contains("2 of 3 inputs") == true)
        let failures = try #require(record["failures"] as? [[String: Any]])
        #expect(failures.map { $0["input"] as? String } == [broken.path, missing])
    }

    @Test("budgets below one byte or not a size are usage errors (64) naming --budget", arguments: ["lots", "0.5", "0", "-3KB", "0.4B"])
    func badBudget(budget: String) async throws {
        let directory = try TemporaryDirectory()
        let inputs = try Self.photos(in: directory)
        let outcome = try await CLIRunner.run(["compress"] + inputs + ["--output", directory.file("out").path, "--budget", budget])
        #expect(outcome.status == 64, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("--budget"))
        #expect(!FileManager.default.fileExists(atPath: directory.file("out").path))
    }

    @Test("all or nothing: when the multipart body cannot be written, no output is left behind")
    func allOrNothing() async throws {
        let directory = try TemporaryDirectory()
        let inputs = try Self.photos(in: directory)
        let output = directory.url.appendingPathComponent("out")
        for body in [directory.file("no-such-dir/request.body").path, directory.url.path] {
            let outcome = try await CLIRunner.run(
                ["compress"] + inputs + [
                    "--output", output.path, "--max-pixel-size", "400",
                    "--min-pixel-size", "200", "--budget", "60KB", "--multipart", body
                ])
            #expect(outcome.status == 1)
            let lines = outcome.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].hasPrefix("image-engine: cannot write outputs: \(body): "), "\(outcome.stderr)")
            #expect(!outcome.stderr.contains("Domain") && !outcome.stderr.contains("UserInfo"))
            #expect(!FileManager.default.fileExists(atPath: output.path), "outputs left behind")
            // Nothing staged is left beside the body either.
            #expect(directory.contents.filter { $0.hasPrefix(".") }.isEmpty, "\(directory.contents)")
        }
        // An existing output directory keeps what it had when the set fails.
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: false)
        try Data("old".utf8).write(to: output.appendingPathComponent("Kite.jpg"))
        let failed = try await CLIRunner.run(
            ["compress"] + inputs + [
                "--output", output.path, "--max-pixel-size", "400",
                "--min-pixel-size", "200", "--budget", "60KB", "--multipart", directory.url.path
            ])
        #expect(failed.status == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: output.path) == ["Kite.jpg"])
        #expect(try Data(contentsOf: output.appendingPathComponent("Kite.jpg")) == Data("old".utf8))
    }

    @Test("a Display P3 photo is uploaded as sRGB: right colours, no profile")
    func displayP3Upload() async throws {
        let directory = try TemporaryDirectory()
        let (png, expected, _) = try InspectAndThumbnailTests.displayP3Patches(size: 200)
        try png.write(to: directory.file("p3.png"))
        let outcome = try await CLIRunner.run([
            "compress", directory.file("p3.png").path, "--output", directory.file("out").path,
            "--max-pixel-size", "400", "--min-pixel-size", "200", "--budget", "100KB"
        ])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let upload = try ImageDecoder(options: DecodingOptions(colorManagement: .preserveSource))
            .decode(Data(contentsOf: directory.file("out/p3.jpg")))
        #expect(upload.iccProfile == nil)
        for (got, want) in zip(InspectAndThumbnailTests.quadrantCentres(upload), expected) {
            #expect(zip(got, want).allSatisfy { abs(Int($0) - Int($1)) <= 5 }, "upload \(got), transicc \(want)")
        }
    }
}
