import ArgumentParser
import Foundation
import ImageCodec

/// `image-engine thumbnail FILE... --output DIR`: downsampled copies, in parallel.
struct ThumbnailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnail",
        abstract: "Write a downsampled, upright copy of each file to the output directory.",
        discussion: """
            Each FILE becomes DIR/<name without extension>.jpg (or .png), written atomically, resized as \
            --size/--mode/--gravity say (sizes and gravity refer to the upright image). A file \
            that fails does not stop the others. Errors: one line per file on stderr, or with --json \
            an {"input", "error"} line on stdout in the file's place. The exit status is 1 if any file \
            failed, 64 for a usage mistake.

            An animated GIF or WebP becomes an animated WebP with --format webp (every frame \
            composited as browsers show it, then resized; the same durations and number of \
            plays), and its first frame in any other format or with --first-frame.

            Examples:
              image-engine thumbnail *.jpg --output thumbs --max-pixel-size 1080
              image-engine thumbnail a.jpg --output cells --size 400x400 --mode fill
              image-engine thumbnail *.png --output out --size 256x0 --format png --json
            """
    )

    @Argument(help: ArgumentHelp("JPEG, PNG, WebP, HEIC, AVIF or GIF files.", valueName: "file"))
    var files: [String]

    @Option(name: .long, help: ArgumentHelp("Directory for the thumbnails (created if missing).", valueName: "dir"))
    var output: String

    @OptionGroup(title: "Size")
    var size: ResizeArguments

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Keep only this part of each image before resizing, placed by --gravity: WxH, each side pixels, a fraction below 1 (0.5: half), or 0 (the whole side).",
            valueName: "WxH"))
    var crop: String?

    @OptionGroup(title: "Canvas")
    var canvas: CanvasArguments

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Turn each image clockwise after its EXIF orientation, by a multiple of 90 (negative, as --rotate=-90: counter-clockwise); --size, --gravity and --crop refer to the turned image.",
            valueName: "degrees"))
    var rotate = 0

    @Option(name: .long, help: ArgumentHelp("Gaussian blur after the resize, σ in pixels (0-100).", valueName: "sigma"))
    var blur: Double?

    @Option(name: .long, help: ArgumentHelp("Sharpen after the resize (unsharp mask), σ in pixels (0-100).", valueName: "sigma"))
    var sharpen: Double?

    @Option(name: .long, help: ArgumentHelp("Pixelate after the resize, in blocks of this many pixels.", valueName: "n"))
    var pixelate: Int?

    @Option(name: .long, help: ArgumentHelp("Quality, 1-100 (default: 85 for JPEG, 79 for WebP, 63 for AVIF; PNG ignores it).", valueName: "q"))
    var quality: Int?

    @Option(name: .long, help: ArgumentHelp("Output format: jpeg, png, webp or avif.", valueName: "jpeg|png|webp|avif"))
    var format: ImageFormat = .jpeg

    @Option(
        name: .long,
        help: ArgumentHelp(
            "JPEG encoder: perceptual (fewer bytes for the same look) or libjpeg-turbo (byte for byte the engine's JPEGs before the perceptual encoder).",
            valueName: "perceptual|libjpeg-turbo"))
    var jpegEncoder: JPEGEncodingOptions.Encoder = .perceptual

    @Flag(name: .long, help: "Write an animated source's first frame alone, whatever the format.")
    var firstFrame = false

    @Option(name: .long, help: ArgumentHelp("Most frames an animated output keeps, the first ones (default: 256).", valueName: "n"))
    var maxFrames = 256

    @Option(name: .long, help: ArgumentHelp("Files processed at once (default: the number of cores).", valueName: "n"))
    var jobs: Int?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Memory the decodes running at once may plan to hold together: bytes or 96MB, 96MiB, 1GB (default: an eighth of RAM, 128MiB-1GiB; one decode alone always runs).",
            valueName: "size"))
    var maxMemory: ByteCount?

    @Flag(name: .long, help: "Keep the source's colour space and ICC profile instead of converting to sRGB (for viewers that manage colour).")
    var keepProfile = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "EXIF the thumbnails keep: none (the default), copyright (the Artist and Copyright tags) or all (the whole block, GPS included, its orientation set upright).",
            valueName: "none|copyright|all"))
    var metadata: KeptMetadata = .none

    @Flag(name: .long, help: "Print one JSON line per file, in argument order: input, output, width, height, bytes, milliseconds.")
    var json = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Cut off borders first: pixels within this distance (0-255 per channel) of the background colour, e.g. 10 for a white sweep.",
            valueName: "threshold"))
    var trim: Double?

    @Option(name: .long, help: ArgumentHelp("The background --trim cuts, RRGGBB (default: the top-left pixel's colour).", valueName: "hex"))
    var trimColor: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Cut as much from both sides of an axis with --trim (the lesser border), so a centred subject stays centred: horizontal, vertical or both.",
            valueName: "axes"))
    var trimEqual: TrimAxes?

    enum TrimAxes: String, ExpressibleByArgument, CaseIterable {
        case horizontal, vertical, both
    }

    func validate() throws {
        if !format.isWritable { throw ValidationError("--format \(format.rawValue) is read, not written: use jpeg, png, webp or avif") }
        if let quality, !(1...100).contains(quality) { throw ValidationError("--quality must be between 1 and 100, got \(quality)") }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1, got \(jobs)") }
        if maxFrames < 1 { throw ValidationError("--max-frames must be at least 1, got \(maxFrames)") }
        _ = try canvas.canvas(size: size.resize(), gravity: size.gravity)
        _ = try region()
        _ = try trimming()
        guard rotate % 90 == 0, abs(rotate) <= 3600 else { throw ValidationError("--rotate must be a multiple of 90, got \(rotate)") }
        for (name, sigma) in [("--blur", blur), ("--sharpen", sharpen)] {
            if let sigma, !(sigma.isFinite && (0...Bitmap.maximumFilterSigma).contains(sigma)) {
                throw ValidationError("\(name) must be a σ from 0 to \(Int(Bitmap.maximumFilterSigma)), got \(sigma)")
            }
        }
        if let pixelate, !(1...Canvas.maximumSide).contains(pixelate) {
            throw ValidationError("--pixelate must be a block size from 1 to \(Canvas.maximumSide), got \(pixelate)")
        }
    }

    /// `--trim`, `--trim-color` and `--trim-equal` as the library's trim.
    func trimming() throws -> Trim? {
        guard let trim else {
            if trimColor != nil || trimEqual != nil { throw ValidationError("--trim-color and --trim-equal need --trim") }
            return nil
        }
        var result = Trim(
            threshold: trim, equalHorizontal: trimEqual == .horizontal || trimEqual == .both,
            equalVertical: trimEqual == .vertical || trimEqual == .both)
        if let trimColor {
            guard let colour = RGBColor(hex: trimColor) else { throw ValidationError("--trim-color must be RRGGBB, got '\(trimColor)'") }
            result.color = colour
        }
        do {
            try result.validate()
        } catch {
            throw ValidationError("--trim: \(error)")
        }
        return result
    }

    /// `--crop WxH` as the library's region, placed by `--gravity`.
    func region() throws -> CropRegion? {
        guard let crop else { return nil }
        let sides = crop.split(separator: "x", omittingEmptySubsequences: false).map { Double($0) }
        guard sides.count == 2, let width = sides[0], let height = sides[1], width >= 0, height >= 0 else {
            throw ValidationError("--crop must be WxH with pixels, fractions below 1 or 0, e.g. 800x0 or 0.5x0.5, got '\(crop)'")
        }
        let region = CropRegion(
            width: CropRegion.Length(width), height: CropRegion.Length(height), gravity: size.gravity, offset: try size.gravityOffset())
        do {
            try region.validate()
        } catch {
            throw ValidationError("--crop \(crop): \(error)")
        }
        return region
    }

    struct Failure: Encodable {
        /// Nil when the failure concerns no one input (the output directory).
        var input: String?
        var error: String
    }

    struct Success: Encodable {
        var input: String
        var output: String
        var width: Int
        var height: Int
        var bytes: Int
        var milliseconds: Double
        var frames: Int
        /// Omitted when empty.
        var warnings: [String]?
    }

    func run() async throws {
        let directory = URL(fileURLWithPath: output, isDirectory: true)
        do throws(ImageCodecError) {
            try FileBytes.createDirectory(directory)
        } catch {
            let record = Failure(input: nil, error: "cannot create the output directory: \(error)")
            json ? Output.jsonLine(record) : Output.error(record.error)
            throw ExitCode(1)
        }
        var options = ThumbnailOptions(
            resize: try size.resize(), format: format,
            colorManagement: keepProfile ? .preserveSource : .convertToSRGB)
        if let quality { (options.jpeg.quality, options.webp.quality, options.avif.quality) = (quality, quality, quality) }
        options.jpeg.encoder = jpegEncoder
        options.keptMetadata = metadata
        options.firstFrameOnly = firstFrame
        options.maxFrames = maxFrames
        options.memoryBudget = maxMemory?.bytes
        options.fastShrinkOnLoad = size.fastShrinkOnLoad
        options.region = try region()
        options.trim = try trimming()
        options.rotation = (rotate % 360 + 360) % 360
        options.filters = ImageFilters(blur: blur == 0 ? nil : blur, sharpen: sharpen == 0 ? nil : sharpen, pixelate: pixelate == 1 ? nil : pixelate)
        options.canvas = try canvas.canvas(size: size.resize(), gravity: size.gravity)
        options.canvas.offset = try size.gravityOffset()
        let showProgress = Output.stderrIsTerminal
        let results = await Thumbnailer(options: options).run(
            files.map { URL(fileURLWithPath: $0) }, outputDirectory: directory, jobs: jobs ?? ProcessInfo.processInfo.activeProcessorCount,
            progress: { finished, total in if showProgress { Output.progress("thumbnail: \(finished)/\(total)") } })
        if showProgress { Output.progress("") }

        var failed = false
        for (file, result) in zip(files, results) {
            switch result {
            case .success(let made):
                let warnings = made.warnings.map(\.message)
                if json {
                    Output.jsonLine(
                        Success(
                            input: file, output: made.output, width: made.width, height: made.height,
                            bytes: made.bytes, milliseconds: (made.milliseconds * 10).rounded() / 10, frames: made.frames,
                            warnings: warnings.isEmpty ? nil : warnings))
                } else {
                    for warning in warnings { Output.error("\(file): warning: \(warning)") }
                }
            case .failure(let error):
                failed = true
                if json {
                    Output.jsonLine(Failure(input: file, error: error.description))
                } else {
                    Output.error(Output.message(file, error))
                }
            }
        }
        if failed { throw ExitCode(1) }
    }
}

extension ImageFormat: ExpressibleByArgument {}
extension JPEGEncodingOptions.Encoder: ExpressibleByArgument {}
extension KeptMetadata: ExpressibleByArgument {}
