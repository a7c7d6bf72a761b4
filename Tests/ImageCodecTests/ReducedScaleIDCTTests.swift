import Foundation
import Testing
@_spi(Tuning) @testable import ImageCodec

/// The engine's IDCTs at the DCT scales 4/8 and 2/8 (`ReducedScaleIDCT`): the band-limited
/// signal sampled at N points per block, where libjpeg-turbo's own average 2 or 4 outputs.
/// Checked on images made of one DCT basis function, whose coefficients a quality-100 JPEG
/// keeps exactly (up to the rounding of the pixels), decoded at exactly the scaled size so no
/// resampling follows.
@Suite("Reduced-scale IDCT")
struct ReducedScaleIDCTTests {
    /// 64×16 gray, 128 + 100·cos((2t+1)uπ/16) with t the position inside its 8×8 block, along x
    /// (`vertical` false) or y: the coefficient F(u, 0) or F(0, u) of every block alone.
    static func basisImage(frequency u: Int, vertical: Bool) -> Bitmap {
        TestImages.make(width: 64, height: 16, format: .gray) { x, y in
            let t = (vertical ? y : x) % 8
            return [UInt8((128 + 100 * cos(Double(2 * t + 1) * Double(u) * .pi / 16)).rounded())]
        }
    }

    /// The decode at numerator/8 with nothing left to Lanczos (headroom 1 at every scale).
    static func decodeAtScale(_ jpeg: Data, numerator: Int, libjpegIDCT: Bool = false) throws -> Bitmap {
        let header = try ImageDecoder.header(of: jpeg)
        var options = DecodingOptions(resize: .force(width: header.width * numerator / 8, height: header.height * numerator / 8))
        options.tuning.dctHeadroom = 1
        options.tuning.boxScaleHeadroom = 1
        options.tuning.libjpegReducedIDCT = libjpegIDCT
        #expect(try ImageDecoder(options: options).plan(jpeg).scaleNumerator == numerator)
        return try ImageDecoder(options: options).decode(jpeg)
    }

    @Test(
        "a frequency the scale can carry comes out as the cosine sampled at the wider pixels' centres",
        arguments: [(4, false), (4, true), (2, false), (2, true)])
    func passband(numerator: Int, vertical: Bool) throws {
        let jpeg = try TestImages.faithfulJPEG(Self.basisImage(frequency: 1, vertical: vertical))
        let decoded = try Self.decodeAtScale(jpeg, numerator: numerator)
        // N samples per block; sample s sits at the centre of 8/N pixels: cos((2s+1)π/2N).
        // libjpeg-turbo's average is 0.981× that at 4/8, 0.906× at 2/8: 2 and 7 levels off.
        var worst = 0.0
        for y in 0..<decoded.height {
            for x in 0..<decoded.width {
                let s = (vertical ? y : x) % numerator
                let expected = 128 + 100 * cos(Double(2 * s + 1) * .pi / Double(2 * numerator))
                worst = max(worst, abs(Double(decoded.pixel(x: x, y: y).first!) - expected))
            }
        }
        #expect(worst <= 1.5, "\(numerator)/8, vertical \(vertical): worst \(worst) levels from the sampled cosine")
    }

    @Test(
        "a frequency above what the scale can carry is filtered out, not folded back",
        arguments: [(4, 6, false), (4, 6, true), (2, 3, false), (2, 3, true)])
    func stopband(numerator: Int, frequency: Int, vertical: Bool) throws {
        let jpeg = try TestImages.faithfulJPEG(Self.basisImage(frequency: frequency, vertical: vertical))
        let decoded = try Self.decodeAtScale(jpeg, numerator: numerator)
        // libjpeg-turbo's averages of 2 (4) outputs leave ±27 (±22) levels of it.
        let levels = decoded.pixels.map { Int($0) }
        #expect(levels.allSatisfy { abs($0 - 128) <= 1 }, "\(numerator)/8, u = \(frequency): \(Set(levels).sorted())")
        let boxed = try Self.decodeAtScale(jpeg, numerator: numerator, libjpegIDCT: true).pixels.map { Int($0) }
        #expect(boxed.contains { abs($0 - 128) >= 20 }, "libjpeg-turbo's own IDCT averages, so it aliases")
    }

    @Test("colour at 4:4:4 (every component at 4×4) and 4:2:0 (chroma at 8×8) decodes at 4/8 like a full decode")
    func colour() throws {
        let source = TestImages.texture(width: 256, height: 160)
        for subsampling in [JPEGEncodingOptions.ChromaSubsampling.s444, .s420] {
            let jpeg = try ImageEncoder.jpeg(source, options: JPEGEncodingOptions(quality: 95, chromaSubsampling: subsampling))
            let scaled = try Self.decodeAtScale(jpeg, numerator: 4)
            let reference = try ImageDecoder().decode(jpeg).resampled(width: scaled.width, height: scaled.height)
            #expect(scaled.format == .rgb)
            #expect(TestImages.meanDifference(scaled, reference) < 2.5, "\(subsampling)")
        }
    }
}
