import ArgumentParser
import Foundation
import ImageBudget
import ImageCodec
import MultipartForm

/// `image-engine compress FILE... --output DIR`: fit a listing's photos into one upload budget.
struct CompressCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compress",
        abstract: "Fit all FILEs together into an upload budget with the best quality per byte.",
        discussion: """
            Writes DIR/<name without extension>.jpg (or .png), and with --multipart the request body. \
            All or nothing: every output is first written under a temporary name beside its \
            destination and renamed into place only when all of them, the body included, were \
            written; if anything fails, nothing is left behind. Errors: one line per problem on \
            stderr naming the file or option (every unreadable input is listed), or with --json one \
            {"error", "failures": [{"input", "error"}]} line on stdout. The exit status is 1 when the \
            set cannot be made or written, 64 for a usage mistake.

            Examples:
              image-engine compress front.jpg side.jpg --output upload --budget 300KB
              image-engine compress *.jpg --output up --multipart up/body --field t=x
            """
    )

    @Argument(help: ArgumentHelp("JPEG, PNG, WebP, HEIC or AVIF files (one product's photos).", valueName: "file"))
    var files: [String]

    @Option(name: .long, help: ArgumentHelp("Directory for the outputs (created if missing).", valueName: "dir"))
    var output: String

    @Option(name: .long, help: ArgumentHelp("Total budget: bytes, or with a unit: 300KB (1000s), 300KiB (1024s), 1MB.", valueName: "size"))
    var budget: ByteCount = ByteCount(bytes: 300_000)

    @Option(name: .long, help: ArgumentHelp("Longest side of an output in pixels.", valueName: "n"))
    var maxPixelSize: Int = 1280

    @Option(name: .long, help: ArgumentHelp("Below this longest side, quality drops instead of size.", valueName: "n"))
    var minPixelSize: Int = 640

    @Option(
        name: .long,
        help: ArgumentHelp(
            "What the allocator maximises: ssimulacra2 (colour-aware; chooses 4:2:0 or 4:4:4 per image) or ssim (luma, 4:2:0 everywhere).",
            valueName: "metric"))
    var metric: UploadQualityMetric = .ssimulacra2

    @Flag(name: .long, help: "Keep PNG sources as PNG when that is smaller at the chosen size.")
    var keepPNG = false

    @Flag(name: .long, help: "Print one JSON document instead of the table (errors too, as one JSON line).")
    var json = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "JPEG encoder: perceptual (higher SSIMULACRA2 in the same budget) or libjpeg-turbo (the engine's outputs before the perceptual encoder).",
            valueName: "perceptual|libjpeg-turbo"))
    var jpegEncoder: JPEGEncodingOptions.Encoder = .perceptual

    @Option(name: .long, help: ArgumentHelp("Also write the registration request body (multipart/form-data) to this file.", valueName: "file"))
    var multipart: String?

    @Option(name: .long, help: ArgumentHelp("A text part for the request, NAME=VALUE (repeatable; needs --multipart).", valueName: "name=value"))
    var field: [String] = []

    @Option(name: .long, help: ArgumentHelp("Form field name of the image parts.", valueName: "name"))
    var imageField: String = "images"

    @Flag(
        name: .customLong("budget-includes-body"),
        help:
            "Count the whole --multipart body against --budget: its framing and --field parts as well as the images (by default the budget counts the images alone)."
    )
    var budgetIncludesBody = false

    func validate() throws {
        if maxPixelSize < 1 { throw ValidationError("--max-pixel-size must be at least 1, got \(maxPixelSize)") }
        if minPixelSize < 1 || minPixelSize > maxPixelSize {
            throw ValidationError("--min-pixel-size must be between 1 and --max-pixel-size (\(maxPixelSize)), got \(minPixelSize)")
        }
        for item in field where !item.contains("=") || item.hasPrefix("=") {
            throw ValidationError("--field must be NAME=VALUE, got '\(item)'")
        }
        if multipart == nil && !field.isEmpty { throw ValidationError("--field needs --multipart") }
        if multipart == nil && budgetIncludesBody { throw ValidationError("--budget-includes-body needs --multipart") }
        if imageField.isEmpty { throw ValidationError("--image-field must not be empty") }
    }

    /// A problem for the JSON error record: the input it concerns, if any.
    struct Failure: Encodable {
        var input: String?
        var error: String
    }

    struct ErrorRecord: Encodable {
        var error: String
        var failures: [Failure]
    }

    func run() async throws {
        // One boundary for the whole run: the framing measured before the search is the one written.
        let boundary = MultipartFormData().boundary
        var imageBudget = budget.bytes
        if budgetIncludesBody {
            let framing = try framingBytes(boundary: boundary)
            guard framing < budget.bytes else {
                throw fail(
                    "the request body's framing and text parts alone take \(framing) of the \(budget.bytes) bytes",
                    [Failure(input: nil, error: "the request body's framing and text parts alone take \(framing) of the \(budget.bytes) bytes")])
            }
            imageBudget -= framing
        }
        var options = UploadBudgetOptions(
            budget: imageBudget, maxPixelSize: maxPixelSize, minPixelSize: minPixelSize, jpegEncoder: jpegEncoder)
        options.keepsPNGWhenSmaller = keepPNG
        options.metric = metric
        let set: CompressedUploadSet
        do {
            set = try await UploadCompressor(options: options).compress(files.map { .file(URL(fileURLWithPath: $0)) })
        } catch .sourceFailures(let failures) {
            // The path as the user typed it, not just its last component.
            throw fail(
                "\(failures.count) of \(files.count) inputs cannot be used",
                failures.map { failure in
                    Failure(input: files[failure.index], error: Output.message(files[failure.index], failure.error))
                })
        } catch {
            throw fail(error.description, [Failure(input: nil, error: error.description)])
        }
        let (outputs, bodyBytes) = try write(set, boundary: boundary)
        json ? printJSON(set, outputs: outputs, bodyBytes: bodyBytes) : printTable(set, bodyBytes: bodyBytes)
    }

    /// The bytes of the request body that are not image data: every boundary and part header,
    /// and the text parts. The images' part headers name files as the compressor will (their
    /// names do not depend on the search but for `.jpg`/`.png`, of one length) and the longer
    /// of the two content types, so the figure can only be over, never under.
    private func framingBytes(boundary: String) throws -> Int {
        let names = UploadCompressor.outputNames(for: files.map { URL(fileURLWithPath: $0).lastPathComponent }, pngs: files.map { _ in false })
        let empty = names.map { (fileName: $0, mimeType: "image/jpeg", data: Data()) }
        do throws(ImageCodecError) {
            return try requestBody(empty, boundary: boundary).body().count
        } catch {
            throw fail(error.description, [Failure(input: nil, error: error.description)])
        }
    }

    /// Reports failures (one stderr line each, or one JSON record) and returns exit status 1.
    private func fail(_ summary: String, _ failures: [Failure]) -> ExitCode {
        if json {
            Output.jsonLine(ErrorRecord(error: summary, failures: failures))
        } else {
            for failure in failures { Output.error(failure.error) }
        }
        return ExitCode(1)
    }

    /// Writes every output and the multipart body, all or nothing: each is staged beside its
    /// destination and renamed into place only when all were staged. Returns the outputs' paths.
    private func write(_ set: CompressedUploadSet, boundary: String) throws -> (outputs: [URL], bodyBytes: Int?) {
        let directory = URL(fileURLWithPath: output, isDirectory: true)
        var created: [String] = []
        var staged: [FileBytes.StagedFile] = []
        var bodyBytes: Int?
        do {
            created = try FileBytes.createDirectory(directory)
            for image in set.images {
                staged.append(try FileBytes.stage(image.data, for: directory.appendingPathComponent(image.fileName)))
            }
            if let multipart {
                let form = try requestBody(set.images.map { ($0.fileName, $0.mimeType, $0.data) }, boundary: boundary)
                let body = form.body()
                bodyBytes = body.count
                staged.append(try FileBytes.stage(body, for: URL(fileURLWithPath: multipart)))
                if !json { Output.error("multipart body: \(multipart) (Content-Type: \(form.contentType))") }
            }
            for file in staged { try file.commit() }
        } catch {
            for file in staged { file.discard() }
            FileBytes.removeDirectories(created)
            throw fail("cannot write outputs", [Failure(input: nil, error: "cannot write outputs: \(error)")])
        }
        return (set.images.map { directory.appendingPathComponent($0.fileName) }, bodyBytes)
    }

    private func requestBody(
        _ images: [(fileName: String, mimeType: String, data: Data)], boundary: String
    ) throws(ImageCodecError) -> MultipartFormData {
        var form: MultipartFormData
        do throws(MultipartFormDataError) {
            form = try MultipartFormData(boundary: boundary)
            for item in field {
                let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                try form.addText(name: String(parts[0]), value: String(parts[1]))
            }
            for image in images {
                try form.addFile(name: imageField, fileName: image.fileName, contentType: image.mimeType, data: image.data)
            }
        } catch {
            // A random boundary in an image is practically impossible; say so plainly if it happens.
            throw .encodingFailed("multipart body: \(error)")
        }
        return form
    }

    struct Report: Encodable {
        struct Image: Encodable {
            var input: String
            var output: String
            var width: Int
            var height: Int
            var quality: Int?
            var bytes: Int
            var score: Double
            var ssimulacra2: Double
            /// "4:2:0" or "4:4:4"; null for PNG and grayscale outputs.
            var chroma: String?
            /// The quality of the chroma tables; null with `chroma`.
            var chromaQuality: Int?
            /// Tenths of a step added to both qualities (0-0.9); left out with `quality`.
            var qualityFraction: Double?

            enum CodingKeys: String, CodingKey {
                case input, output, width, height, quality, bytes, score, ssimulacra2, chroma
                case chromaQuality = "chroma_quality"
                case qualityFraction = "quality_fraction"
            }

            // `chroma` is null, not missing, for a PNG; `quality` is left out, as it always was.
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(input, forKey: .input)
                try container.encode(output, forKey: .output)
                try container.encode(width, forKey: .width)
                try container.encode(height, forKey: .height)
                try container.encodeIfPresent(quality, forKey: .quality)
                try container.encodeIfPresent(qualityFraction, forKey: .qualityFraction)
                try container.encode(bytes, forKey: .bytes)
                try container.encode(score, forKey: .score)
                try container.encode(ssimulacra2, forKey: .ssimulacra2)
                try container.encode(chroma, forKey: .chroma)
                try container.encode(chromaQuality, forKey: .chromaQuality)
            }
        }
        var budget: Int
        var total: Int
        /// The multipart body's size, with --multipart.
        var bodyBytes: Int?
        var images: [Image]

        enum CodingKeys: String, CodingKey {
            case budget, total, images
            case bodyBytes = "body_bytes"
        }
    }

    private func printJSON(_ set: CompressedUploadSet, outputs: [URL], bodyBytes: Int?) {
        Output.pretty(
            Report(
                budget: budget.bytes, total: set.totalBytes, bodyBytes: bodyBytes,
                images: zip(files, zip(set.images, outputs)).map { file, pair in
                    let (image, output) = pair
                    return Report.Image(
                        input: file, output: output.path, width: image.width,
                        height: image.height, quality: image.quality, bytes: image.bytes, score: (image.score * 10000).rounded() / 10000,
                        ssimulacra2: (image.ssimulacra2 * 100).rounded() / 100, chroma: image.chroma?.rawValue,
                        chromaQuality: image.chromaQuality, qualityFraction: image.quality == nil ? nil : image.qualityFraction)
                }))
    }

    private func printTable(_ set: CompressedUploadSet, bodyBytes: Int?) {
        let header = ["file", "source → output", "size", "quality", "chroma", "bytes", "score", "ssimulacra2"]
        var rows = [header]
        for image in set.images {
            rows.append([
                image.sourceName, "\(image.sourceBytes) → \(image.fileName)", "\(image.width)×\(image.height)",
                image.quality.map(String.init) ?? "png", image.chroma?.rawValue ?? "-", "\(image.bytes)",
                String(format: "%.4f", image.score), String(format: "%.2f", image.ssimulacra2)
            ])
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            print(zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  "))
        }
        let counted = budgetIncludesBody ? bodyBytes ?? set.totalBytes : set.totalBytes
        let what = budgetIncludesBody ? "request body" : "total"
        print("\(what) \(counted) of \(budget.bytes) bytes (\(String(format: "%.1f", 100 * Double(counted) / Double(budget.bytes)))%)")
        if let bodyBytes, !budgetIncludesBody { print("request body \(bodyBytes) bytes (images \(set.totalBytes), framing and text parts included)") }
    }
}

extension UploadQualityMetric: ExpressibleByArgument {}
