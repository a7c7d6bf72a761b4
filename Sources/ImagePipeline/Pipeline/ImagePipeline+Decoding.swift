import Foundation
import ImageCodec

/// Decoding: where the pipeline's CPU and most of its memory go.
extension ImagePipeline {
    /// The one path that decodes for a job: the header (the download's read when there is one),
    /// the plan, a decode slot admitted by the plan's memory (`decodeMemoryLimit`), then the
    /// decode on a pipeline thread. A resize the plan refuses is the request's error
    /// (`invalidRequest`), found before the slot is taken; the rest belong to the bytes.
    func decodeInSlot(_ data: Data, image: ImageSource?, resize: Resize?, for job: JobContext) async throws(ImagePipelineError) -> Bitmap {
        let source: ImageSource
        if let image { source = image } else { source = try readHeader(data) }
        let options = decodingOptions(resize)
        let plan = try self.plan(source, options)
        let decoded = try await coordinator.runOnThread(.decode, for: job, cost: plan.memoryBytes) { [self] in
            Result { () throws(ImagePipelineError) in try decode(source, options) }
        }
        return try decoded.get()
    }

    /// Decodes on the calling thread: `cachedImage(for:)` with `.encodedResponse`, whose price
    /// is exactly this.
    func decodeNow(_ data: Data, resize: Resize?) throws(ImagePipelineError) -> Bitmap {
        let source = try readHeader(data)
        let options = decodingOptions(resize)
        _ = try plan(source, options)
        return try decode(source, options)
    }

    private func plan(_ source: ImageSource, _ options: DecodingOptions) throws(ImagePipelineError) -> DecodePlan {
        do throws(ImageCodecError) {
            return try source.plan(options)
        } catch {
            // The header has been read within the limits: what the plan refuses is the resize.
            throw .invalidRequest(error)
        }
    }

    private func decode(_ source: ImageSource, _ options: DecodingOptions) throws(ImagePipelineError) -> Bitmap {
        recorder.add(.decodes)
        do throws(ImageCodecError) {
            return try source.decode(options).bitmap
        } catch {
            throw .decodingFailed(error)
        }
    }

    /// The request's resize, checked before any I/O: a resize no image could satisfy is the
    /// request's error, and must not cost a download or a cached original.
    func validate(_ request: ImageRequest) throws(ImagePipelineError) {
        do throws(ImageCodecError) {
            try request.resize?.validate(maxDimension: configuration.decodingLimits.maxDimension)
        } catch {
            throw .invalidRequest(error)
        }
    }
}
