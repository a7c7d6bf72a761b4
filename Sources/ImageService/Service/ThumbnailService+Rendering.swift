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
    /// Decodes and encodes one thumbnail in a worker slot and keeps it in the result cache.
    func render(_ input: RenderInput) async -> Result<RenderedImage, ServiceError> {
        // An identical render that finished a moment ago has stored its result already.
        if let image = results.memoryValue(forKey: input.resultKey), image.etag == input.etag { return .success(image) }
        let decoding = DecodingOptions(resize: input.resize, limits: limits, fastShrinkOnLoad: configuration.fastShrinkOnLoad)
        let plan: DecodePlan
        do {
            plan = try input.image.plan(decoding)
        } catch {
            return .failure(ServiceError(error))
        }

        // The decode's planned memory, reserved before it waits for a worker (so a worker never
        // waits for memory), or refused at once: what sources and decodes hold never passes
        // --max-memory.
        guard plan.memoryBytes <= memory.capacity else { return .failure(.needsMoreMemory(plan.memoryBytes, budget: memory.capacity)) }
        guard memory.reserve(plan.memoryBytes) else { return .failure(.memoryFull) }
        defer { memory.release(plan.memoryBytes) }
        let queued = ContinuousClock.now
        do {
            try await admission.admit()
        } catch {
            return .failure(error == .queueFull ? .queueFull : .cancelled)
        }
        let queue = (ContinuousClock.now - queued).milliseconds
        await whileAdmitted?()
        guard !Task.isCancelled else {
            admission.release()
            return .failure(.cancelled)
        }
        counters.addDecode()
        let quality = input.quality
        let format = input.format
        // Decoding and encoding block a thread for up to a second: not one of the cooperative
        // pool's, which every request's async code shares.
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Result<(Data, Double, Double), ImageCodecError>, Never>) in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(
                    returning: Result { () throws(ImageCodecError) -> (Data, Double, Double) in
                        let decodeStarted = ContinuousClock.now
                        let bitmap = try input.image.decode(decoding).bitmap
                        let encodeStarted = ContinuousClock.now
                        let data =
                            switch format {
                            case .jpeg: try ImageEncoder.jpeg(bitmap, options: JPEGEncodingOptions(quality: quality))
                            case .png: try ImageEncoder.png(bitmap)
                            case .webp: try ImageEncoder.webp(bitmap, options: WebPEncodingOptions(quality: quality))
                            case .avif: try ImageEncoder.avif(bitmap, options: AVIFEncodingOptions(quality: quality))
                            }
                        return (data, (encodeStarted - decodeStarted).milliseconds, (ContinuousClock.now - encodeStarted).milliseconds)
                    })
            }
        }
        admission.release()
        switch outcome {
        case .success(let (data, decode, encode)):
            let timing = PhaseTiming(queue: queue, download: input.download, decode: decode, encode: encode)
            metrics.recordPhases(timing)
            let image = RenderedImage(
                body: ByteBuffer(bytes: data), contentType: format.contentType, etag: input.etag, lastModified: input.lastModified,
                sourceHasAlpha: input.header.hasAlpha, timing: timing)
            results.store(image, encoded: data, forKey: input.resultKey)
            return .success(image)
        case .failure(let error):
            // Bytes that do not decode are of no use to the next request either.
            pipeline.removeCachedData(for: sourceRequest(input.source))
            return .failure(ServiceError(error))
        }
    }
}
