import ArgumentParser
import Foundation
import ImageBudget
import ImageCodec

/// `image-engine compress FILE... --output DIR`: fit a listing's photos into one upload budget.
struct CompressCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compress",
        abstract: "Fit all FILEs together into an upload budget with the best quality per byte.",
        discussion: "Writes DIR/<name without extension>.jpg (or .png). Nothing is written unless the whole set fits."
    )

    @Argument(help: "JPEG or PNG files (one product's photos).")
    var files: [String]

    @Option(name: .long, help: "Directory for the outputs (created if missing).")
    var output: String

    @Option(name: .long, help: "Total budget: bytes, or with a unit: 300KB (1000s), 300KiB (1024s), 1MB.")
    var budget: ByteCount = ByteCount(bytes: 300_000)

    @Option(name: .long, help: "Longest side of an output in pixels.")
    var maxPixelSize: Int = 1280

    @Option(name: .long, help: "Below this longest side, quality drops instead of size.")
    var minPixelSize: Int = 640

    @Flag(name: .long, help: "Keep PNG sources as PNG when that is smaller at the chosen size.")
    var keepPNG = false

    @Flag(name: .long, help: "Print one JSON document instead of the table.")
    var json = false

    @Option(name: .long, help: "Also write the registration request body (multipart/form-data) to this file.")
    var multipart: String?

    @Option(name: .long, help: "A text part for the request, NAME=VALUE (repeatable).")
    var field: [String] = []

    @Option(name: .long, help: "Form field name of the image parts.")
    var imageField: String = "images"

    func validate() throws {
        if maxPixelSize < 1 || minPixelSize < 1 || minPixelSize > maxPixelSize {
            throw ValidationError("need 1 ≤ --min-pixel-size ≤ --max-pixel-size")
        }
        for item in field where !item.contains("=") { throw ValidationError("--field must be NAME=VALUE, got \(item)") }
        if multipart == nil && !field.isEmpty { throw ValidationError("--field needs --multipart") }
    }

    func run() async throws {
        var options = UploadBudgetOptions(budget: budget.bytes, maxPixelSize: maxPixelSize, minPixelSize: minPixelSize)
        options.keepsPNGWhenSmaller = keepPNG
        let set: CompressedUploadSet
        do {
            set = try await UploadCompressor(options: options).compress(files.map { .file(URL(fileURLWithPath: $0)) })
        } catch {
            Output.error(error.description)
            throw ExitCode(1)
        }
        try write(set)
        json ? printJSON(set) : printTable(set)
    }

    /// Writes every output (each atomically) and the multipart body; the set was complete
    /// before the first write, so a failure leaves no half-written file.
    private func write(_ set: CompressedUploadSet) throws {
        let directory = URL(fileURLWithPath: output, isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            for image in set.images {
                try FileBytes.writeAtomically(image.data, to: directory.appendingPathComponent(image.fileName))
            }
            if let multipart {
                var form = MultipartFormData()
                for item in field {
                    let parts = item.split(separator: "=", maxSplits: 1)
                    form.addText(name: String(parts[0]), value: parts.count > 1 ? String(parts[1]) : "")
                }
                for image in set.images {
                    form.addFile(name: imageField, fileName: image.fileName, contentType: image.mimeType, data: image.data)
                }
                try form.body().write(to: URL(fileURLWithPath: multipart), options: .atomic)
                Output.error("multipart body: \(multipart) (Content-Type: \(form.contentType))")
            }
        } catch {
            Output.error("cannot write outputs: \(error)")
            throw ExitCode(1)
        }
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
        }
        var budget: Int
        var total: Int
        var images: [Image]
    }

    private func printJSON(_ set: CompressedUploadSet) {
        let directory = URL(fileURLWithPath: output, isDirectory: true)
        Output.pretty(Report(budget: set.budget, total: set.totalBytes, images: zip(files, set.images).map { file, image in
            Report.Image(input: file, output: directory.appendingPathComponent(image.fileName).path, width: image.width,
                         height: image.height, quality: image.quality, bytes: image.bytes, score: (image.score * 10000).rounded() / 10000)
        }))
    }

    private func printTable(_ set: CompressedUploadSet) {
        let header = ["file", "source → output", "size", "quality", "bytes", "score"]
        var rows = [header]
        for image in set.images {
            rows.append([image.sourceName, "\(image.sourceBytes) → \(image.fileName)", "\(image.width)×\(image.height)",
                         image.quality.map(String.init) ?? "png", "\(image.bytes)", String(format: "%.4f", image.score)])
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            print(zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  "))
        }
        print("total \(set.totalBytes) of \(set.budget) bytes (\(String(format: "%.1f", 100 * Double(set.totalBytes) / Double(set.budget)))%)")
    }
}

/// A byte count given as `300000`, `300KB`, `300KiB`, `1.5MB`, `2MiB`.
struct ByteCount: ExpressibleByArgument {
    var bytes: Int

    init(bytes: Int) { self.bytes = bytes }

    init?(argument: String) {
        let text = argument.trimmingCharacters(in: .whitespaces).lowercased()
        // Longest suffixes first: "kib" before "b".
        let units: [(String, Double)] = [("kib", 1024), ("mib", 1024 * 1024), ("kb", 1000), ("mb", 1_000_000), ("k", 1000), ("b", 1)]
        var multiplier = 1.0
        var number = Substring(text)
        for (suffix, value) in units where text.hasSuffix(suffix) {
            multiplier = value
            number = text.dropLast(suffix.count)
            break
        }
        guard let value = Double(number.trimmingCharacters(in: .whitespaces)), value > 0, value * multiplier < Double(Int.max) else {
            return nil
        }
        bytes = Int(value * multiplier)
    }
}
