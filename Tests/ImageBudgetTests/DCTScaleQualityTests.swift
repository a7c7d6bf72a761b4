import Foundation
@_spi(Tuning) import ImageCodec
import Testing
@testable import ImageBudget

/// The DCT scale a JPEG thumbnail decodes at (`TargetSize.jpegScaleNumerator`) must not cost
/// visible detail. Here, not in ImageCodecTests, because SSIM lives in ImageBudget.
@Suite("DCT-scaled decode quality")
struct DCTScaleQualityTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/dct-scale/path-detail.jpg")

    /// Grass from Path.jpg (see the fixture's README) reduced 6.4×, 3.6× and 3.2×. With headroom
    /// 1.5 at every scale and libjpeg-turbo's own IDCTs it decoded at 2/8 and 4/8, box filters,
    /// and left 1.6× to Lanczos: SSIM 0.9894 and 0.9942 against the full decode + Lanczos (on the
    /// whole photo, 0.004-0.005 below vipsthumbnail). The engine's rule decodes them at 3/8 and
    /// 5/8, and into 225 at 4/8 with its own low-pass IDCT, 1.78× left (libjpeg's box: 0.9962).
    @Test("a DCT-scaled thumbnail keeps the detail of a full decode + Lanczos", arguments: [(125, 3), (225, 4), (250, 5)])
    func keepsDetail(size: Int, numerator: Int) throws {
        let data = try Data(contentsOf: Self.fixture)
        let decoder = ImageDecoder(options: DecodingOptions(maxPixelSize: size))
        #expect(try decoder.plan(data).scaleNumerator == numerator)
        let thumbnail = try decoder.decode(data)
        // Lanczos alone, without the box pre-reduction the engine uses for 4× and more.
        let reference = try ImageDecoder().decode(data).resampled(width: thumbnail.width, height: thumbnail.height, boxPreReduction: false)
        let score = try StructuralSimilarity.score(LumaPlane(reference), LumaPlane(thumbnail))
        #expect(score >= 0.998, "SSIM \(score) against a full decode + Lanczos at \(thumbnail.width)×\(thumbnail.height)")
    }
}
