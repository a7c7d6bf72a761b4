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

extension CancellationTests {
    @Test(
        "every loop after the decode stops in a cancelled task: blur, sharpen, pixelate, turn, canvas, grayscale, flattening, trim, smart crop",
        arguments: [
            "blur", "sharpen", "pixelate", "turn", "canvas", "canvas on colour", "grayscale", "flatten", "trim", "smart crop", "resample"
        ])
    func finishingLoops(_ step: String) async throws {
        let data = try SmallPhotos.data("kite.jpg")
        let bitmap = try ImageDecoder().decode(data)
        let alpha = try Canvas(padding: .all(4)).apply(to: bitmap)
        let work: @Sendable () throws(ImageCodecError) -> Int = {
            switch step {
            case "blur": return try bitmap.blurred(sigma: 30).width
            case "sharpen": return try bitmap.sharpened(sigma: 1).width
            case "pixelate": return try bitmap.pixelated(size: 4).width
            case "turn": return try bitmap.applying(.right).width
            case "canvas": return try Canvas(extend: .size(width: 2000, height: 2000)).apply(to: bitmap).width
            case "canvas on colour": return try Canvas(padding: .all(100), background: .white).apply(to: bitmap).width
            case "grayscale": return try bitmap.grayscaled().width
            case "flatten": return try alpha.flattened().width
            case "trim":
                var options = DecodingOptions()
                options.trim = Trim(threshold: 10)
                let source = try ImageSource(data: data)
                return source.size(for: try source.resolvingTrim(options)).width
            case "smart crop":
                return try ImageDecoder(options: DecodingOptions(resize: .fill(width: 100, height: 50, gravity: .smart))).decode(data).width
            default: return try bitmap.resampled(width: 100, height: 80).width
            }
        }
        let cancelled = await inCancelledTask(work)
        #expect(throws: ImageCodecError.cancelled, "\(step)") { _ = try cancelled.get() }
        let live = try await Task { try work() }.value
        #expect(live > 0, "\(step)")
    }
}
