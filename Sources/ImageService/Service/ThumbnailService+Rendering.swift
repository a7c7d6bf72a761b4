import Dispatch
import Foundation
import NIOCore
import ImageCodec

/// What a render needs, fixed before it is shared by the requests that join it.
struct RenderInput: Sendable {
    /// The source, its header read once by the pipeline.
    let image: ImageSource
    var header: ImageHeader { image.header }
    let options: ProcessingOptions
    /// What to make: the options' resize, or the output-size clamp.
    let resize: Resize?
    let format: ProcessingOptions.OutputFormat
    /// The quality the format is encoded at (JPEG, WebP).
    let quality: Int
    let etag: String
    let lastModified: String?
    let download: Double?
    let resultKey: String
    let source: URL
}

extension ThumbnailService {
    /// The largest WebP or AVIF output, in pixels (4096²): either encoder makes it within the
    /// default 10 s deadline on one core.
    static let maximumLossyOutputPixels = 1 << 24

    /// The largest AVIF output, in pixels (2896², 8.4 MP): libavif cannot be stopped once it
    /// encodes, so what an AVIF render may cost is bounded by its size and speed instead.
    static let maximumAVIFOutputPixels = 1 << 23

    /// libaom's speed for an AVIF output of `pixels`. Chosen by size so that the costliest
    /// content (noise) at the largest size allowed, with `mb:`'s three further encodes, ends
    /// within the default 10 s deadline on one core: measured with libavif 0.11 and libaom 3.6
    /// (`avifenc -j 1`, 2-core build machine), noise takes 1.05 s a megapixel at speed 6, 0.5 s
    /// at 8 and 0.22 s at 9, so the worst render is 2 MP at speed 8 or 8.4 MP at speed 9:
    /// 1.9 s an encode, 7.6 s with a byte cap. Thumbnails under a megapixel keep speed 6.
    static func avifSpeed(pixels: Int) -> Int {
        switch pixels {
        case ..<(1 << 20): 6
        case ..<(1 << 21): 8
        default: 9
        }
    }

    /// Waits for a worker slot with `bytes` prepaid into the request's ledger; nil once
    /// admitted (call `admission.release(ledger)` when done), else what answers the request
    /// instead.
    private func admitted(_ ledger: MemoryLedger, reserving bytes: Int) async -> ServiceError? {
        do {
            try await admission.admit(ledger, reserving: bytes)
            return nil
        } catch {
            switch error {
            case .queueFull: return .queueFull
            case .memoryFull: return .memoryFull
            case .cancelled: return .cancelled
            }
        }
    }

    /// The ledger the current request's buffers are charged to: its own, set by `respond(to:)`
    /// (a render that others joined charges the request that started it), or, for work driven
    /// without one (tests calling `render` directly), a ledger of its own on the same budget.
    var ledger: MemoryLedger { MemoryLedger.current ?? MemoryLedger(budget: memory) }

    /// `options` with the trim's window found: a decode of its own, admitted for what its plan
    /// holds and run on the codec threads, before the render plans the real one.
    private func trimmed(_ options: DecodingOptions, image: ImageSource, ledger: MemoryLedger) async -> Result<DecodingOptions, ServiceError> {
        let needed: Int
        do {
            needed = try image.trimPlan(options)?.memoryBytes ?? 0
        } catch {
            return .failure(ServiceError(error))
        }
        guard needed <= memory.capacity else { return .failure(.needsMoreMemory(needed, budget: memory.capacity)) }
        if let refusal = await admitted(ledger, reserving: needed) { return .failure(refusal) }
        defer { admission.release(ledger) }
        guard !Task.isCancelled else { return .failure(.cancelled) }
        return await withTaskExecutorPreference(CodecExecutor.shared) { () async -> Result<DecodingOptions, ServiceError> in
            do throws(ImageCodecError) {
                return .success(try image.resolvingTrim(options))
            } catch {
                return .failure(ServiceError(error))
            }
        }
    }

    /// Decodes and encodes one thumbnail in a worker slot and keeps it in the result cache.
    ///
    /// Everything the render allocates — the decode's rows and result, the turn, the filters,
    /// the canvas, the encoder's planes and every output, `mb:`'s candidates — is charged to
    /// the request's ledger as it is allocated, drawing on what was prepaid as the render was
    /// admitted (its plan); the encoded answer stays charged for as long as anything holds it.
    func render(_ input: RenderInput) async -> Result<RenderedImage, ServiceError> {
        // An identical render that finished a moment ago has stored its result already.
        if let image = results.memoryValue(forKey: input.resultKey), image.etag == input.etag { return .success(image) }
        let ledger = self.ledger
        var decoding = DecodingOptions(resize: input.resize, limits: limits, fastShrinkOnLoad: configuration.fastShrinkOnLoad)
        decoding.appliesOrientation = input.options.autoRotates
        decoding.region = input.options.decodingRegion
        // scp:0: the source's values and profile, which every encoder writes back.
        if !input.options.stripsColorProfile { decoding.colorManagement = .preserveSource }
        if input.options.trim != nil {
            // The trimmed size decides the resize (rt:auto, a zero side): find the window first.
            decoding.trim = input.options.trim
            switch await trimmed(decoding, image: input.image, ledger: ledger) {
            case .success(let resolved): decoding = resolved
            case .failure(let error): return .failure(error)
            }
            let size = input.image.size(for: decoding)
            decoding.resize = ProcessingJob.resize(
                input.options, maxOutputSide: configuration.maxOutputSide, sourceWidth: size.width, sourceHeight: size.height)
        }
        let jpegEncoder = configuration.jpegEncoder
        let plan: DecodePlan
        do {
            plan = try input.image.plan(decoding)
        } catch {
            return .failure(ServiceError(error))
        }

        // The turn (`rot:`), the filters and what goes around the decoded image (extend,
        // padding, background), sized and counted before a pixel is touched: a canvas past the
        // limits is the request's error.
        let finishing = input.options.finishing
        let canvas = finishing.canvas
        let output: (width: Int, height: Int)
        let afterDecodeBytes: Int
        do {
            output = try finishing.outputSize(width: plan.width, height: plan.height, limits: limits)
            afterDecodeBytes = try finishing.plannedBytes(width: plan.width, height: plan.height, limits: limits)
        } catch {
            return .failure(ServiceError(error))
        }
        // Padding around a source clamped to the longest side allowed would pass it.
        guard output.width <= configuration.maxOutputSide, output.height <= configuration.maxOutputSide else {
            return .failure(.badRequest("the output would exceed \(configuration.maxOutputSide) pixels a side"))
        }

        // WebP and AVIF encoders take seconds a megapixel at their settings and hold 14-22
        // bytes a pixel: larger outputs would outlive the request's deadline on their worker.
        let outputPixels = output.width * output.height
        // A byte cap may encode several times over, and filters hold floats: the same bound.
        if input.format == .webp || input.format == .avif || input.options.maxBytes != nil || input.options.filters,
            outputPixels > Self.maximumLossyOutputPixels
        {
            return .failure(.outputTooLarge(width: output.width, height: output.height, format: input.format.rawValue))
        }
        if input.format == .avif, outputPixels > Self.maximumAVIFOutputPixels {
            return .failure(
                .outputTooLarge(width: output.width, height: output.height, format: input.format.rawValue, limit: Self.maximumAVIFOutputPixels))
        }
        // An animated source: its frames count against --max-src-pixels as imgproxy counts them
        // (width × height × the frames an answer may keep), whatever the output; answered as
        // WebP with --max-animation-frames above 1 (and no byte cap), it is an animated WebP of
        // its first frames, each decoded, finished and encoded in turn.
        let keptFrames = min(input.header.frameCount, configuration.maxAnimationFrames)
        let (sourcePixels, pixelsOverflow) = (input.header.width * input.header.height).multipliedReportingOverflow(by: keptFrames)
        guard !pixelsOverflow, sourcePixels <= configuration.maxSourcePixels else {
            return .failure(
                ServiceError(.tooLarge(width: input.header.width, height: input.header.height * keptFrames, limit: configuration.maxSourcePixels)))
        }
        let animated = input.format == .webp && keptFrames > 1 && input.options.maxBytes == nil
        let frames: (count: Int, memoryBytes: Int)
        do {
            frames = animated ? try AnimationDecoder.plan(input.image, options: decoding, maxFrames: keptFrames) : (1, plan.memoryBytes)
        } catch {
            return .failure(ServiceError(error))
        }
        // Every frame is encoded: the frames' output pixels together stay within one large
        // output's.
        if animated, outputPixels.multipliedReportingOverflow(by: frames.count).partialValue > Self.maximumLossyOutputPixels {
            return .failure(.outputTooLarge(width: output.width, height: output.height * frames.count, format: "animated webp"))
        }
        // The decode's planned memory, the canvas's and the encoder's, prepaid as the render is
        // admitted (so a worker never waits for memory): what sources, decodes and encodes hold
        // never passes --max-memory, and a render that does not fit yet waits its turn while
        // others run. A byte cap holds one more output at a time: the best that fit so far.
        let channels = input.header.hasAlpha || (canvas.background == nil && !canvas.isIdentity) ? 4 : 3
        let encoding =
            animated
            ? WebPAnimationWriter.plannedBytes(width: output.width, height: output.height, frames: frames.count)
            : ImageEncoder.plannedBytes(width: output.width, height: output.height, channels: channels, format: input.format.codecFormat)
        let candidates = input.options.maxBytes.map { min($0, encoding) } ?? 0
        let (decodeAndAfter, firstOverflow) = frames.memoryBytes.addingReportingOverflow(afterDecodeBytes)
        let (withEncoder, secondOverflow) = decodeAndAfter.addingReportingOverflow(encoding)
        let (needed, thirdOverflow) = withEncoder.addingReportingOverflow(candidates)
        let overflow = firstOverflow || secondOverflow || thirdOverflow
        guard !overflow, needed <= memory.capacity else { return .failure(.needsMoreMemory(overflow ? .max : needed, budget: memory.capacity)) }
        let queued = ContinuousClock.now
        if let refusal = await admitted(ledger, reserving: needed) { return .failure(refusal) }
        let queue = (ContinuousClock.now - queued).milliseconds
        await whileAdmitted?()
        guard !Task.isCancelled else {
            admission.release(ledger)
            return .failure(.cancelled)
        }
        counters.addDecode()
        let quality = input.quality
        let format = input.format
        let metadata = input.options.keptMetadata.metadata(of: input.image)
        let avifSpeed = Self.avifSpeed(pixels: outputPixels)
        // Decoding and encoding block a thread for up to a second: not one of the cooperative
        // pool's, which every request's async code shares; but inside this task, so a cancelled
        // request stops its decode or encode between rows.
        let (cap, limits) = (input.options.maxBytes, limits)
        let outcome = await withTaskExecutorPreference(CodecExecutor.shared) { () async -> Result<(Data, Double, Double), ByteCapFailure> in
            do throws(ByteCapFailure) {
                let decodeStarted = ContinuousClock.now
                if animated {
                    // Decoding and encoding interleave, a frame at a time: all of it is the decode's.
                    let data = try Result { () throws(ImageCodecError) -> Data in
                        var decoder = try AnimationDecoder(source: input.image, options: decoding, maxFrames: frames.count)
                        return try WebPAnimationWriter.encode(
                            &decoder, finishing: finishing, options: WebPEncodingOptions(quality: quality), limits: limits
                        ).data
                    }.mapError(ByteCapFailure.codec).get()
                    return .success((data, (ContinuousClock.now - decodeStarted).milliseconds, 0))
                }
                let bitmap = try Result { () throws(ImageCodecError) -> Bitmap in
                    try finishing.apply(to: input.image.decode(decoding).bitmap, limits: limits)
                }.mapError(ByteCapFailure.codec).get()
                let encodeStarted = ContinuousClock.now
                let encode = { (quality: Int) throws(ImageCodecError) -> Data in
                    switch format {
                    case .jpeg:
                        try ImageEncoder.jpeg(bitmap, options: JPEGEncodingOptions(quality: quality, encoder: jpegEncoder), metadata: metadata)
                    case .png: try ImageEncoder.png(bitmap, metadata: metadata)
                    case .webp: try ImageEncoder.webp(bitmap, options: WebPEncodingOptions(quality: quality), metadata: metadata)
                    case .avif: try ImageEncoder.avif(bitmap, options: AVIFEncodingOptions(quality: quality, speed: avifSpeed), metadata: metadata)
                    }
                }
                var data = try Result { () throws(ImageCodecError) in try encode(quality) }.mapError(ByteCapFailure.codec).get()
                if let cap, data.count > cap {
                    // Over its cap: the best quality that fits, or a 422.
                    data = try ByteCapSearch(format: format, cap: cap, encode: encode).fitted(quality: quality, first: data)
                }
                return .success((data, (encodeStarted - decodeStarted).milliseconds, (ContinuousClock.now - encodeStarted).milliseconds))
            } catch {
                return .failure(error)
            }
        }
        admission.release(ledger)
        switch outcome {
        case .success(let (data, decode, encode)):
            let timing = PhaseTiming(queue: queue, download: input.download, decode: decode, encode: encode)
            metrics.recordPhases(timing)
            let image = RenderedImage(
                body: data, contentType: format.contentType, etag: input.etag, lastModified: input.lastModified,
                sourceHasAlpha: input.header.hasAlpha, timing: timing)
            results.store(image, forKey: input.resultKey)
            return .success(image)
        case .failure(.codec(.cancelled)):
            // Stopped for its request, not for its bytes: the source stays cached.
            return .failure(.cancelled)
        case .failure(.codec(.memoryBudgetExceeded)):
            // Nothing wrong with the bytes: the budget was full when a buffer was made.
            return .failure(.memoryFull)
        case .failure(.unreachable(let smallest)):
            return .failure(.byteCapUnreachable(cap: cap ?? 0, smallest: smallest))
        case .failure(.codec(let error)):
            // Bytes that do not decode are of no use to the next request either.
            pipeline.removeCachedData(for: sourceRequest(input.source))
            return .failure(ServiceError(error))
        }
    }
}
