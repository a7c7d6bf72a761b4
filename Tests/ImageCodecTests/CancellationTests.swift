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

    @Test("a JPEG (baseline or progressive), PNG or WebP decode in a cancelled task throws .cancelled; in a live task it decodes")
    func decodes() async throws {
        let kite = try SmallPhotos.data("kite.jpg")
        // libjpeg reads a progressive file's scans inside one call (jpeg_start_decompress):
        // only the shim's progress monitor can stop it there.
        let progressive = try ImageEncoder.jpeg(
            try ImageDecoder().decode(kite), options: JPEGEncodingOptions(progressive: true, encoder: .libjpegTurbo))
        let inputs = [
            ("jpeg", kite), ("progressive jpeg", progressive), ("png", try WebPFixtures.data("calla-alpha.png")),
            ("lossy webp", try WebPFixtures.data("kite.webp")), ("lossless webp", try WebPFixtures.data("calla-lossless.webp"))
        ]
        for (name, data) in inputs {
            for resize in [nil, Resize.fit(width: 64, height: 64)] {
                let decoder = ImageDecoder(options: DecodingOptions(resize: resize))
                let cancelled = await inCancelledTask { () throws(ImageCodecError) in try decoder.decode(data) }
                #expect(throws: ImageCodecError.cancelled, "\(name) \(String(describing: resize))") { _ = try cancelled.get() }
                let live = try await Task { try decoder.decode(data) }.value
                #expect(live.width > 0, "\(name)")
            }
        }
    }

    @Test("every encoder with a progress point stops in a cancelled task, and finishes in a live one")
    func encodes() async throws {
        let bitmap = try ImageDecoder().decode(try SmallPhotos.data("kite.jpg"))
        // libjpeg-turbo's, libpng's and libwebp's encoders are one call each: the shim's progress
        // monitor, row loop and progress hook stop them.
        let encoders: [(String, @Sendable (Bitmap) throws(ImageCodecError) -> Data)] = [
            ("perceptual jpeg", { bitmap throws(ImageCodecError) in try ImageEncoder.jpeg(bitmap) }),
            (
                "libjpeg-turbo",
                { bitmap throws(ImageCodecError) in try ImageEncoder.jpeg(bitmap, options: JPEGEncodingOptions(encoder: .libjpegTurbo)) }
            ),
            ("png", { bitmap throws(ImageCodecError) in try ImageEncoder.png(bitmap) }),
            ("webp", { bitmap throws(ImageCodecError) in try ImageEncoder.webp(bitmap) })
        ]
        for (name, encode) in encoders {
            let cancelled = await inCancelledTask { () throws(ImageCodecError) in try encode(bitmap) }
            #expect(throws: ImageCodecError.cancelled, "\(name)") { _ = try cancelled.get() }
            let live = try await Task { try encode(bitmap) }.value
            #expect(try ImageDecoder.header(of: live).width == bitmap.width, "\(name)")
        }
    }
}
