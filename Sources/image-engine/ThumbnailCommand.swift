import ArgumentParser
import Foundation
import ImageCodec

/// `image-engine thumbnail FILE... --output DIR`: downsampled copies, in parallel.
struct ThumbnailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnail",
        abstract: "Write a downsampled, upright copy of each file to the output directory.",
        discussion: "Each FILE becomes DIR/<name without extension>.jpg (or .png). A file that fails is reported on stderr and the rest still run; the exit status is 1 if any failed."
    )

    @Argument(help: "JPEG or PNG files.")
    var files: [String]

    @Option(name: .long, help: "Directory for the thumbnails (created if missing).")
    var output: String

    @Option(name: .long, help: "Longest side of the output in pixels. Omit to keep the size.")
    var maxPixelSize: Int?

    @Option(name: .long, help: "JPEG quality, 1-100.")
    var quality: Int = 85

    @Option(name: .long, help: "Output format: jpeg or png.")
    var format: ImageFormat = .jpeg

    @Option(name: .long, help: "Files processed at once (default: number of cores).")
    var jobs: Int = ProcessInfo.processInfo.activeProcessorCount

    @Flag(name: .long, help: "Print one JSON line per file: input, output, width, height, bytes, milliseconds.")
    var json = false

    func validate() throws {
        if let maxPixelSize, maxPixelSize < 1 { throw ValidationError("--max-pixel-size must be at least 1") }
        if !(1...100).contains(quality) { throw ValidationError("--quality must be 1...100") }
        if jobs < 1 { throw ValidationError("--jobs must be at least 1") }
    }

    struct Failure: Encodable {
        var input: String
        var error: String
    }

    struct Success: Encodable {
        var input: String
        var output: String
        var width: Int
        var height: Int
        var bytes: Int
        var milliseconds: Double
    }

    func run() async throws {
        let directory = URL(fileURLWithPath: output, isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            Output.error("cannot create output directory \(output): \(error.localizedDescription)")
            throw ExitCode(1)
        }
        var options = ThumbnailOptions(maxPixelSize: maxPixelSize, format: format)
        options.jpeg.quality = quality
        let showProgress = Output.stderrIsTerminal
        let results = await Thumbnailer(options: options).run(
            files.map { URL(fileURLWithPath: $0) }, outputDirectory: directory, jobs: jobs,
            progress: { finished, total in if showProgress { Output.progress("thumbnail: \(finished)/\(total)") } })
        if showProgress { Output.progress("") }

        var failed = false
        for (file, result) in zip(files, results) {
            switch result {
            case .success(let made):
                if json {
                    Output.jsonLine(Success(input: file, output: made.output, width: made.width, height: made.height,
                                            bytes: made.bytes, milliseconds: (made.milliseconds * 10).rounded() / 10))
                }
            case .failure(let error):
                failed = true
                Output.error("\(file): \(error)")
                if json { Output.jsonLine(Failure(input: file, error: error.description)) }
            }
        }
        if failed { throw ExitCode(1) }
    }
}

extension ImageFormat: ExpressibleByArgument {}
