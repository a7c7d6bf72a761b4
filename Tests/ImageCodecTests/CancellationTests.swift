import Foundation
import ImageCodec
import Testing
import TestSupport

/// Decoders and encoders look at their task's cancellation between rows: work in a cancelled
/// task stops with `.cancelled`, and the same work in a live task (or on a plain thread)
/// finishes as before.
@Suite("Cancellation between rows")
struct CancellationTests {
    /// Runs `work` in a task that is cancelled before it starts.
    private func inCancelledTask<T: Sendable>(_ work: @escaping @Sendable () throws(ImageCodecError) -> T) async -> Result<T, ImageCodecError> {
        await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return Result(catching: work)
        }.value
    }

    @Test("a JPEG or PNG decode in a cancelled task throws .cancelled; in a live task it decodes")
    func decodes() async throws {
        let jpeg = try SmallPhotos.data("kite.jpg")
        let png = try WebPFixtures.data("calla-alpha.png")
        for (name, data) in [("jpeg", jpeg), ("png", png)] {
            for resize in [nil, Resize.fit(width: 64, height: 64)] {
                let decoder = ImageDecoder(options: DecodingOptions(resize: resize))
                let cancelled = await inCancelledTask { () throws(ImageCodecError) in try decoder.decode(data) }
                #expect(throws: ImageCodecError.cancelled, "\(name) \(String(describing: resize))") { _ = try cancelled.get() }
                let live = try await Task { try decoder.decode(data) }.value
                #expect(live.width > 0, "\(name)")
            }
        }
    }

    @Test("the perceptual JPEG encoder stops in a cancelled task; libjpeg-turbo's, which has no row loop of ours, finishes")
    func encodes() async throws {
        let bitmap = try ImageDecoder().decode(try SmallPhotos.data("kite.jpg"))
        let cancelled = await inCancelledTask { () throws(ImageCodecError) in try ImageEncoder.jpeg(bitmap) }
        #expect(throws: ImageCodecError.cancelled) { _ = try cancelled.get() }
        let turbo = await inCancelledTask { () throws(ImageCodecError) in
            try ImageEncoder.jpeg(bitmap, options: JPEGEncodingOptions(encoder: .libjpegTurbo))
        }
        #expect(try ImageDecoder.header(of: turbo.get()).width == bitmap.width)
        #expect(try ImageDecoder.header(of: try await Task { try ImageEncoder.jpeg(bitmap) }.value).width == bitmap.width)
    }
}
