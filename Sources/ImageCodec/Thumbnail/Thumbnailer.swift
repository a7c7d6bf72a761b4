import Foundation

/// Turns image files into thumbnail files: read, decode at reduced scale, resample, encode,
/// write atomically. Batches run in parallel; one bad file never stops the others.
public struct Thumbnailer: Sendable {
    /// Size, format, encoding and colour of the outputs.
    public var options: ThumbnailOptions

    /// A thumbnailer producing what `options` say.
    public init(options: ThumbnailOptions) {
        self.options = options
    }

    /// `<directory>/<input name without extension>.<jpg|png>`.
    public func outputURL(for input: URL, in directory: URL) -> URL {
        directory.appendingPathComponent(input.deletingPathExtension().lastPathComponent)
            .appendingPathExtension(options.format.fileExtension)
    }

    /// Makes one thumbnail. On failure nothing is written.
    public func makeThumbnail(from input: URL, to output: URL) throws(ImageCodecError) -> ThumbnailResult {
        let decoded = try decode(input)
        return try encode(decoded, to: output)
    }

    /// A decoded, resampled image waiting to be encoded, and the time it took.
    struct Decoded: Sendable {
        var input: URL
        /// The thumbnail, or, for an animation, its file (made frame by frame while decoding).
        var content: Content
        var metadata: ImageMetadata
        var elapsed: Duration
        var frames = 1
        var warnings: [DecodingWarning] = []

        enum Content: Sendable {
            case bitmap(Bitmap)
            case encoded(Data, width: Int, height: Int)
        }

        init(input: URL, bitmap: Bitmap, metadata: ImageMetadata, elapsed: Duration) {
            (self.input, content, self.metadata, self.elapsed) = (input, .bitmap(bitmap), metadata, elapsed)
        }

        init(input: URL, size: (width: Int, height: Int), encoded: Data, elapsed: Duration) {
            (self.input, content, metadata, self.elapsed) = (input, .encoded(encoded, width: size.width, height: size.height), .none, elapsed)
        }
    }

    /// What the batch's decodes may plan to hold together: the options', or the pipeline's rule.
    var memoryBudget: Int { options.memoryBudget ?? MemoryBudget.defaultDecodeBudget }

    private var decoder: ImageDecoder {
        // The box and the region are the turned image's: the decoder works before the turn.
        var decoding = DecodingOptions(
            resize: options.resize?.unrotated(by: options.rotation), colorManagement: options.colorManagement, limits: options.limits,
            fastShrinkOnLoad: options.fastShrinkOnLoad)
        decoding.region = options.region?.unrotated(by: options.rotation)
        decoding.trim = options.trim
        return ImageDecoder(options: decoding)
    }

    /// Bytes decoding `input` will hold: its plan's peak plus the encoded file, read from the
    /// first 256 KB (the whole file when its header is longer). A file that cannot be planned
    /// costs nothing here: its decode fails at once and reports why.
    func plannedMemory(_ input: URL) -> Int {
        do throws(ImageCodecError) {
            let (prefix, fileSize) = try FileBytes.readPrefix(input, count: 256 << 10)
            do {
                return try planned(decoder.plan(prefix)) + fileSize
            } catch .truncatedData where prefix.count < fileSize {
                return try planned(decoder.plan(FileBytes.read(input, maximumSize: options.limits.maxFileSize))) + fileSize
            }
        } catch {
            return 0
        }
    }

    /// The plan's peak and the canvas the bitmap is then put on; for an animation written
    /// whole, its canvas and the writer as well (see `AnimationDecoder.plannedBytes`).
    private func planned(_ plan: DecodePlan) throws(ImageCodecError) -> Int {
        let finishing = try options.finishing.plannedBytes(width: plan.width, height: plan.height, limits: options.limits)
        guard writesAnimation(plan.header) else { return plan.memoryBytes + finishing }
        let size = try options.finishing.outputSize(width: plan.width, height: plan.height, limits: options.limits)
        let canvas = plan.header.width * plan.header.height * 4
        return plan.memoryBytes + 2 * canvas + finishing
            + WebPAnimationWriter.plannedBytes(width: size.width, height: size.height, frames: min(plan.header.frameCount, options.maxFrames))
    }

    /// True when a source with `header` becomes an animated WebP.
    private func writesAnimation(_ header: ImageHeader) -> Bool {
        options.format == .webp && !options.firstFrameOnly && options.maxFrames > 1 && header.frameCount > 1
    }

    /// Read, decode, resample and put on the canvas: the first half of a thumbnail.
    func decode(_ input: URL) throws(ImageCodecError) -> Decoded {
        let start = ContinuousClock.now
        let decoder = decoder
        let source = try decoder.source(FileBytes.read(input, maximumSize: options.limits.maxFileSize))
        if writesAnimation(source.header) {
            // Frame by frame: memory is a frame or two and the writer's state.
            var frames = try AnimationDecoder(source: source, options: decoder.options, maxFrames: options.maxFrames)
            let made = try WebPAnimationWriter.encode(&frames, finishing: options.finishing, options: options.webp, limits: options.limits)
            var decoded = Decoded(input: input, size: (made.width, made.height), encoded: made.data, elapsed: ContinuousClock.now - start)
            (decoded.frames, decoded.warnings) = (frames.frameCount, frames.warnings)
            return decoded
        }
        let image = try source.decode(decoder.options)
        let bitmap = try options.finishing.apply(to: image.bitmap, limits: options.limits)
        var decoded = Decoded(input: input, bitmap: bitmap, metadata: options.keptMetadata.metadata(of: source), elapsed: ContinuousClock.now - start)
        decoded.warnings = image.warnings
        return decoded
    }

    /// Encode and write atomically: the second half.
    func encode(_ decoded: Decoded, to output: URL) throws(ImageCodecError) -> ThumbnailResult {
        let start = ContinuousClock.now
        let (data, width, height): (Data, Int, Int)
        switch decoded.content {
        case .encoded(let encoded, let encodedWidth, let encodedHeight):
            (data, width, height) = (encoded, encodedWidth, encodedHeight)
        case .bitmap(let bitmap):
            data = try ImageEncoder.encode(
                bitmap, as: options.format, jpegOptions: options.jpeg, pngOptions: options.png, webpOptions: options.webp,
                avifOptions: options.avif, metadata: decoded.metadata)
            (width, height) = (bitmap.width, bitmap.height)
        }
        try FileBytes.writeAtomically(data, to: output)
        let elapsed = decoded.elapsed + (ContinuousClock.now - start)
        return ThumbnailResult(
            input: decoded.input.path, output: output.path, width: width, height: height,
            bytes: data.count, milliseconds: elapsed / .milliseconds(1), frames: decoded.frames, warnings: decoded.warnings)
    }

    /// Makes thumbnails for all inputs with at most `jobs` decodes running at once, and only
    /// as many as `options.memoryBudget` holds by their plans (see `BatchSchedule`). Results
    /// are in input order. Two inputs that would write the same output file (`a.jpg`,
    /// `a.png`) are not allowed to overwrite each other: the later one fails.
    ///
    /// A file's encode runs beside the next file's decode, so even `jobs: 1` keeps a second
    /// core busy, as vipsthumbnail's thread pool does; at most `jobs` decoded bitmaps wait for
    /// their encode, which bounds memory.
    ///
    /// `outputDirectory` is created (with its parents) when missing, as the CLI does; when it
    /// cannot be, every result is that error and no file is read.
    public func run(
        _ inputs: [URL], outputDirectory: URL, jobs: Int,
        progress: @escaping @Sendable (_ finished: Int, _ total: Int) -> Void = { _, _ in }
    ) async -> [Result<ThumbnailResult, ImageCodecError>] {
        do throws(ImageCodecError) {
            _ = try FileBytes.createDirectory(outputDirectory)
        } catch {
            return inputs.map { _ in .failure(error) }
        }
        var results = [Result<ThumbnailResult, ImageCodecError>?](repeating: nil, count: inputs.count)
        var claimed: [String: String] = [:]
        var work: [(item: (index: Int, input: URL, output: URL), cost: Int)] = []
        for (index, input) in inputs.enumerated() {
            let output = outputURL(for: input, in: outputDirectory)
            if let earlier = claimed[output.path] {
                results[index] = .failure(.invalidArgument("output \(output.lastPathComponent) would overwrite the thumbnail of \(earlier)"))
            } else {
                claimed[output.path] = input.path
                work.append(((index, input, output), plannedMemory(input)))
            }
        }
        var finished = inputs.count - work.count
        let jobs = max(1, jobs)
        var schedule = BatchSchedule(work, budget: memoryBudget)

        enum Step: Sendable {
            case decoded(index: Int, output: URL, cost: Int, Result<Decoded, ImageCodecError>)
            case finished(index: Int, Result<ThumbnailResult, ImageCodecError>)
        }
        await withTaskGroup(of: Step.self) { group in
            var decoding = 0, encoding = 0
            func startDecodes() {
                while decoding < jobs, encoding < jobs, let (item, cost) = schedule.next() {
                    decoding += 1
                    group.addTask {
                        .decoded(
                            index: item.index, output: item.output, cost: cost,
                            Result { () throws(ImageCodecError) in try decode(item.input) })
                    }
                }
            }
            startDecodes()
            while let step = await group.next() {
                switch step {
                case .decoded(let index, let output, let cost, let result):
                    decoding -= 1
                    schedule.finished(cost: cost)
                    switch result {
                    case .success(let decoded):
                        encoding += 1
                        group.addTask { .finished(index: index, Result { () throws(ImageCodecError) in try encode(decoded, to: output) }) }
                    case .failure(let error):
                        results[index] = .failure(error)
                        finished += 1
                        progress(finished, inputs.count)
                    }
                case .finished(let index, let result):
                    encoding -= 1
                    results[index] = result
                    finished += 1
                    progress(finished, inputs.count)
                }
                startDecodes()
            }
        }
        return results.map { $0 ?? .failure(.invalidArgument("not processed")) }
    }
}
