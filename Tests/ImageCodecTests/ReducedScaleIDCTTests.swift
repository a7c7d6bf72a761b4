import CImageKernels
import Foundation
import Testing
import TestSupport
@_spi(Tuning) @testable import ImageCodec

/// The engine's IDCTs at the reduced DCT scales (`ReducedScaleIDCT`, and `iec_idct_scaled` for
/// 3/8 to 7/8): the band-limited signal sampled at N points per block, where libjpeg-turbo's own
/// average 2 or 4 outputs at 4/8 and 2/8.
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
        arguments: [
            (4, false), (4, true), (2, false), (2, true), (3, false), (3, true), (5, false), (5, true), (6, false), (6, true), (7, false), (7, true)
        ])
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

    @Test(
        "colour at 4:4:4 (every component at N×N) and 4:2:0 (chroma at 2N×2N: 6, 8, 10, 12, 14) decodes like a full decode",
        arguments: [3, 4, 5, 6, 7])
    func colour(numerator: Int) throws {
        let source = TestImages.texture(width: 256, height: 160)
        for subsampling in [JPEGEncodingOptions.ChromaSubsampling.s444, .s420] {
            let jpeg = try ImageEncoder.jpeg(source, options: JPEGEncodingOptions(quality: 95, chromaSubsampling: subsampling))
            let scaled = try Self.decodeAtScale(jpeg, numerator: numerator)
            let reference = try ImageDecoder().decode(jpeg).resampled(width: scaled.width, height: scaled.height)
            #expect(scaled.format == .rgb)
            #expect(TestImages.meanDifference(scaled, reference) < 2.5, "\(numerator)/8, \(subsampling)")
            // libjpeg-turbo's integer IDCT computes the same formula: within a level or two.
            let libjpeg = try Self.decodeAtScale(jpeg, numerator: numerator, libjpegIDCT: true)
            #expect(TestImages.meanDifference(scaled, libjpeg) < 0.6, "\(numerator)/8, \(subsampling): against libjpeg-turbo's")
        }
    }

    @Test("the scaled IDCT kernel: AVX2 and portable give the same bytes, within half a level of the formula in double")
    func kernel() throws {
        var random = SeededGenerator()
        let avx2 = iec_kernels_cpu_has_avx2() == 1
        for n in [2, 3, 4, 5, 6, 7, 10, 12, 14] {
            #expect(iec_idct_scaled_supports(Int32(n)) == 1)
            for trial in 0..<300 {
                // Sparse blocks as photos have them, and dense ones; steps up to 60 keep most
                // samples inside 0...255, where the formula can be checked.
                var coefficients = [Int16](repeating: 0, count: 64)
                let density = trial % 3 == 0 ? 64 : Int.random(in: 1...12, using: &random)
                for _ in 0..<density { coefficients[Int.random(in: 0..<64, using: &random)] = Int16.random(in: -40...40, using: &random) }
                let quantization = (0..<64).map { _ in UInt16.random(in: 1...60, using: &random) }
                var portable = [UInt8](repeating: 0, count: 16 * 16)
                var fast = [UInt8](repeating: 0, count: 16 * 16)
                try Self.run(iec_idct_scaled_portable, n, coefficients, quantization, into: &portable)
                if avx2 { try Self.run(iec_idct_scaled_avx2, n, coefficients, quantization, into: &fast) }
                let k = min(n, 8)
                for y in 0..<n {
                    for x in 0..<n {
                        var value = 0.0
                        for v in 0..<k {
                            for u in 0..<k {
                                let basis = { (i: Int, t: Int) in
                                    (i == 0 ? 1 / 2.0.squareRoot() : 1) / 2 * cos(Double((2 * t + 1) * i) * .pi / Double(2 * n))
                                }
                                value += basis(u, x) * basis(v, y) * Double(Int(coefficients[8 * v + u]) * Int(quantization[8 * v + u]))
                            }
                        }
                        let exact = value + 128
                        let got = portable[16 * y + x]
                        if exact > 0.5 && exact < 254.5 {
                            #expect(abs(Double(got) - exact) <= 0.5 + 1e-3, "n \(n), (\(x), \(y)): \(got) for \(exact), seed \(random.seed)")
                        } else {
                            #expect(got == (exact <= 0.5 ? 0 : 255) || abs(Double(got) - exact) <= 0.5 + 1e-3, "n \(n) clamp, seed \(random.seed)")
                        }
                        if avx2 { #expect(fast[16 * y + x] == got, "n \(n), (\(x), \(y)), seed \(random.seed)") }
                    }
                }
                // Nothing written past the n×n block.
                #expect(portable.enumerated().allSatisfy { ($0.offset % 16 < n && $0.offset / 16 < n) || $0.element == 0 })
            }
        }
    }

    @Test("a flat block is its DC / 8 + 128 rounded half up, as libjpeg rounds, at every size and on both versions")
    func flatBlocks() throws {
        // At quantizer 1 every fourth DC value puts a flat block's mean on a half level; a DC
        // that reached the samples as 0.49999 instead of 0.5 made a whole photo a level darker
        // in places where libjpeg-turbo's own IDCT (and a full decode) rounds up.
        let avx2 = iec_kernels_cpu_has_avx2() == 1
        for n in [2, 3, 4, 5, 6, 7, 10, 12, 14] {
            for dc in stride(from: -1100, through: 1100, by: 1) {
                var coefficients = [Int16](repeating: 0, count: 64)
                coefficients[0] = Int16(dc)
                let quantization = [UInt16](repeating: 1, count: 64)
                let expected = UInt8(min(255, max(0, (Double(dc) / 8 + 128 + 0.5).rounded(.down))))
                var portable = [UInt8](repeating: 0, count: 256)
                var fast = [UInt8](repeating: 0, count: 256)
                try Self.run(iec_idct_scaled_portable, n, coefficients, quantization, into: &portable)
                if avx2 { try Self.run(iec_idct_scaled_avx2, n, coefficients, quantization, into: &fast) }
                for y in 0..<n {
                    for x in 0..<n {
                        #expect(portable[16 * y + x] == expected, "n \(n), DC \(dc)")
                        if avx2 { #expect(fast[16 * y + x] == expected, "n \(n), DC \(dc)") }
                    }
                }
            }
        }
    }

    /// Calls a version of the kernel with rows 16 bytes apart in `output`.
    static func run(
        _ kernel: (Int32, UnsafePointer<Int16>?, UnsafePointer<UInt16>?, UnsafePointer<UnsafeMutablePointer<UInt8>?>?, UInt32) -> Void,
        _ n: Int, _ coefficients: [Int16], _ quantization: [UInt16], into output: inout [UInt8]
    ) throws {
        output.withUnsafeMutableBufferPointer { bytes in
            let rows: [UnsafeMutablePointer<UInt8>?] = (0..<16).map { bytes.baseAddress! + 16 * $0 }
            kernel(Int32(n), coefficients, quantization, rows, 0)
        }
    }
}
