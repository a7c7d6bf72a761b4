import CImageKernels
import Foundation
@testable import ImageCodec
import Testing
import TestSupport

/// The C kernels' two versions give the same bits: the resampler's passes over random rows,
/// weights, tap counts and lengths (tails of every size), the AVX2 version against the portable
/// one and both against the order of sums written here. CI runs the codec suite a second time
/// with IMAGE_ENGINE_PORTABLE_KERNELS=1, so the golden hashes hold on both.
@Suite("C kernels")
struct KernelTests {
    @Test("the vertical pass: AVX2 and portable give identical floats, and the sums are the tap-order sums")
    func verticalPass() throws {
        var random = SeededGenerator()
        let avx2 = iec_kernels_cpu_has_avx2() == 1
        for _ in 0..<200 {
            let count = Int.random(in: 0...300, using: &random)
            let taps = Int.random(in: 1...12, using: &random)
            let stride = count + Int.random(in: 0...40, using: &random)
            let ring = (0..<(taps * stride + 1)).map { _ in Float.random(in: -300...300, using: &random) }
            let weights = (0..<taps).map { _ in Float.random(in: -0.3...1.2, using: &random) }
            let offsets = (0..<taps).map { _ in Int.random(in: 0...(taps - 1), using: &random) * stride }
            var portable = [Float](repeating: .nan, count: count)
            var fast = [Float](repeating: .nan, count: count)
            iec_resample_vertical_portable(ring, offsets, weights, Int32(taps), &portable, count)
            if avx2 { iec_resample_vertical_avx2(ring, offsets, weights, Int32(taps), &fast, count) }
            var chosen = [Float](repeating: .nan, count: count)
            iec_resample_vertical(ring, offsets, weights, Int32(taps), &chosen, count)
            for x in 0..<count {
                var expected: Float = 0
                for tap in 0..<taps {
                    let product = weights[tap] * ring[offsets[tap] + x]
                    expected = expected + product
                }
                #expect(portable[x].bitPattern == expected.bitPattern, "x \(x) of \(count), \(taps) taps, seed \(random.seed)")
                if avx2 { #expect(fast[x].bitPattern == expected.bitPattern, "x \(x) of \(count), \(taps) taps, seed \(random.seed)") }
                #expect(chosen[x].bitPattern == expected.bitPattern)
            }
        }
    }

    @Test("the box pre-reduction: each block's pixels added in order over its rows, then one reciprocal times the sum")
    func boxPreReduction() throws {
        var random = SeededGenerator()
        for _ in 0..<200 {
            let lanes = Bool.random(using: &random) ? 4 : 1
            let box = Int.random(in: 2...5, using: &random)
            let width = Int.random(in: 1...70, using: &random)
            let rows = Int.random(in: 1...box, using: &random)
            let blocks = (width + box - 1) / box
            let pixelRows = (0..<rows).map { _ in (0..<(lanes * width)).map { _ in Float.random(in: 0...65_025, using: &random) } }
            var sums = [Float](repeating: 0, count: lanes * blocks)
            for row in pixelRows { iec_box_accumulate(row, width, lanes, box, &sums) }
            var averages = [Float](repeating: .nan, count: lanes * width)
            iec_box_average(&sums, width, lanes, box, rows, &averages)
            for block in 0..<blocks {
                let columns = min(width, block * box + box) - block * box
                for lane in 0..<lanes {
                    var sum: Float = 0
                    for row in pixelRows {
                        for x in (block * box)..<(block * box + columns) { sum = sum + row[lanes * x + lane] }
                    }
                    let expected = (1 / (Float(columns) * Float(rows))) * sum
                    let message: Comment = "block \(block) of \(blocks), lane \(lane) of \(lanes), box \(box), seed \(random.seed)"
                    #expect(averages[lanes * block + lane].bitPattern == expected.bitPattern, message)
                    #expect(sums[lanes * block + lane] == 0, message)
                }
            }
        }
    }

    @Test("the horizontal pass: AVX2 and portable give identical floats: even taps plus odd taps, each in tap order")
    func horizontalPass() throws {
        var random = SeededGenerator()
        let avx2 = iec_kernels_cpu_has_avx2() == 1
        for _ in 0..<200 {
            let width = Int.random(in: 1...90, using: &random)
            let stride = Int.random(in: 1...20, using: &random)
            let sourceWidth = Int.random(in: stride...(stride + 60), using: &random)
            let source = (0..<(4 * sourceWidth)).map { _ in Float.random(in: -300...300, using: &random) }
            // Counts differ from pixel to pixel (the kernel's shared run and each pixel's tail).
            let counts = (0..<width).map { _ in Int.random(in: 1...stride, using: &random) }
            let starts = counts.map { Int.random(in: 0...(sourceWidth - $0), using: &random) }
            let weights = (0..<(width * stride)).map { _ in Float.random(in: -0.3...1.2, using: &random) }
            // The colour kernel reads each weight four times, one per lane, as the resampler lays them out.
            let weights4 = weights.flatMap { [Float](repeating: $0, count: 4) }
            var portable = [Float](repeating: .nan, count: 4 * width)
            var fast = [Float](repeating: .nan, count: 4 * width)
            var gray = [Float](repeating: .nan, count: width)
            iec_resample_horizontal4_portable(source, weights4, starts, counts, Int32(stride), &portable, width)
            if avx2 { iec_resample_horizontal4_avx2(source, weights4, starts, counts, Int32(stride), &fast, width) }
            iec_resample_horizontal1(source, weights, starts, counts, Int32(stride), &gray, width)
            for x in 0..<width {
                for lane in 0..<4 {
                    var (even, odd): (Float, Float) = (0, 0)
                    for tap in 0..<counts[x] {
                        let product = weights[x * stride + tap] * source[4 * (starts[x] + tap) + lane]
                        if tap % 2 == 0 { even = even + product } else { odd = odd + product }
                    }
                    let expected = even + odd
                    let message: Comment = "pixel \(x) of \(width), lane \(lane), \(counts[x]) taps, seed \(random.seed)"
                    #expect(portable[4 * x + lane].bitPattern == expected.bitPattern, message)
                    if avx2 { #expect(fast[4 * x + lane].bitPattern == expected.bitPattern, message) }
                }
                var expectedGray: Float = 0
                for tap in 0..<counts[x] {
                    let product = weights[x * stride + tap] * source[starts[x] + tap]
                    expectedGray = expectedGray + product
                }
                #expect(gray[x].bitPattern == expectedGray.bitPattern, "gray pixel \(x), seed \(random.seed)")
            }
        }
    }

    @Test("the encoder's colour conversion: AVX2 and portable give identical floats, the matrix summed left to right")
    func colourConversion() throws {
        var random = SeededGenerator()
        let avx2 = iec_kernels_cpu_has_avx2() == 1
        for _ in 0..<100 {
            let count = Int.random(in: 0...70, using: &random)
            // Exactly 3 × count bytes: the kernel must read none past the last pixel (ASan in CI).
            let rgb = (0..<(3 * count)).map { _ in UInt8.random(in: 0...255, using: &random) }
            var (y, cb, cr) = ([Float](repeating: .nan, count: count), [Float](repeating: .nan, count: count), [Float](repeating: .nan, count: count))
            var (fastY, fastCb, fastCr) = (y, cb, cr)
            iec_rgb_to_ycbcr_portable(rgb, count, &y, &cb, &cr)
            if avx2 { iec_rgb_to_ycbcr_avx2(rgb, count, &fastY, &fastCb, &fastCr) }
            let planes = [y, cb, cr, fastY, fastCb, fastCr]
            for x in 0..<count {
                let (r, g, b) = (Float(rgb[3 * x]), Float(rgb[3 * x + 1]), Float(rgb[3 * x + 2]))
                let expected: [Float] = [
                    ((0.299 * r + 0.587 * g) + 0.114 * b) - 128, (-0.168_735_9 * r - 0.331_264_1 * g) + 0.5 * b,
                    (0.5 * r - 0.418_687_6 * g) - 0.081_312_4 * b
                ]
                for plane in 0..<3 {
                    #expect(planes[plane][x].bitPattern == expected[plane].bitPattern, "pixel \(x) of \(count), plane \(plane), seed \(random.seed)")
                    if avx2 { #expect(planes[3 + plane][x].bitPattern == expected[plane].bitPattern, "AVX2, pixel \(x), plane \(plane)") }
                }
            }
        }
    }

    @Test("the encoder's DCT and quantization of a row of blocks: AVX2 and portable give identical coefficients and floats")
    func forwardDCT() throws {
        var random = SeededGenerator()
        let avx2 = iec_kernels_cpu_has_avx2() == 1
        let (basis, cosines) = (ForwardDCT.transposedBasis, ForwardDCT.cosines)
        for trial in 0..<300 {
            // `count` blocks side by side in a plane whose rows may be longer than the blocks.
            let count = Int.random(in: 1...4, using: &random)
            let stride = 8 * count + Int.random(in: 0...5, using: &random)
            let plane = (0..<(8 * stride)).map { _ in
                Float.random(in: -128...127, using: &random).rounded(trial % 2 == 0 ? .toNearestOrEven : .towardZero)
            }
            let reciprocals = (0..<64).map { _ in 1 / Float.random(in: 1...120, using: &random) }
            let deadZone = (0..<64).map { $0 == 0 ? 0 : Float.random(in: 0...0.7, using: &random) }
            let masked = (0..<64).map { $0 == 0 ? 0 : Float.random(in: 0...0.5, using: &random) }
            let strengths = (0..<count).map { _ in Float.random(in: 0...1.5, using: &random) }
            var expected: [Int16] = []
            for block in 0..<count {
                let samples = (0..<64).map { plane[($0 / 8) * stride + 8 * block + $0 % 8] }
                var (portable, fast) = (samples, samples)
                iec_fdct_portable(&portable, basis, cosines)
                if avx2 {
                    iec_fdct_avx2(&fast, basis, cosines)
                    #expect(zip(portable, fast).allSatisfy { $0.bitPattern == $1.bitPattern }, "transform, seed \(random.seed)")
                }
                // The quantized coefficients from the transform's floats, as the kernel defines them.
                expected += (0..<64).map { index in
                    let scaled = portable[index] * reciprocals[index]
                    let threshold = deadZone[index] + strengths[block] * masked[index]
                    return abs(scaled) < threshold ? 0 : Int16(scaled.rounded(.toNearestOrEven))
                }
            }
            var (quantizedPortable, quantizedFast) = ([Int16](repeating: 99, count: 64 * count), [Int16](repeating: 99, count: 64 * count))
            iec_fdct_quantize_row_portable(plane, stride, count, strengths, basis, cosines, reciprocals, deadZone, masked, &quantizedPortable)
            #expect(quantizedPortable == expected, "seed \(random.seed)")
            if avx2 {
                iec_fdct_quantize_row_avx2(plane, stride, count, strengths, basis, cosines, reciprocals, deadZone, masked, &quantizedFast)
                #expect(quantizedFast == expected, "AVX2, seed \(random.seed)")
            }
        }
    }

    @Test("quantization saturates to 16 bits on both paths, as AVX2's pack does")
    func quantizationSaturates() {
        // A step far below 1 takes a DC of 8-bit samples past 16 bits; no table does, but every
        // path must still agree.
        let (basis, cosines) = (ForwardDCT.transposedBasis, ForwardDCT.cosines)
        // Four rows of 127 over four of −128, one block in a plane of its own width.
        let blockPlane = [Float](repeating: 127, count: 32) + [Float](repeating: -128, count: 32)
        let reciprocals = [Float](repeating: 64, count: 64)
        let zeros = [Float](repeating: 0, count: 64)
        var transformed = blockPlane
        iec_fdct_portable(&transformed, basis, cosines)
        let expected = transformed.map { (value: Float) -> Int16 in
            Int16(max(-32_768, min(32_767, (value * 64).rounded(.toNearestOrEven))))
        }
        #expect(expected.contains(32_767) && expected.contains(-32_768), "the case reaches both limits")
        var portable = [Int16](repeating: 99, count: 64)
        iec_fdct_quantize_row_portable(blockPlane, 8, 1, [0], basis, cosines, reciprocals, zeros, zeros, &portable)
        #expect(portable == expected)
        if iec_kernels_cpu_has_avx2() == 1 {
            var fast = [Int16](repeating: 99, count: 64)
            iec_fdct_quantize_row_avx2(blockPlane, 8, 1, [0], basis, cosines, reciprocals, zeros, zeros, &fast)
            #expect(fast == expected)
        }
    }

    @Test("the resampler's RGB input: AVX2 and portable spread each pixel to R, G, B, 0, to the row's last byte")
    func rgbToFloat4() {
        var random = SeededGenerator()
        let avx2 = iec_kernels_cpu_has_avx2() == 1
        for _ in 0..<200 {
            let width = Int.random(in: 1...40, using: &random)
            // The row ends where its allocation ends, so a read past it would be caught by ASan.
            let rgb = UnsafeMutablePointer<UInt8>.allocate(capacity: 3 * width)
            defer { rgb.deallocate() }
            for index in 0..<(3 * width) { rgb[index] = UInt8.random(in: 0...255, using: &random) }
            let expected = (0..<(4 * width)).map { $0 % 4 == 3 ? 0 : Float(rgb[3 * ($0 / 4) + $0 % 4]) }
            var portable = [Float](repeating: -1, count: 4 * width)
            iec_rgb_to_float4_portable(rgb, width, &portable)
            #expect(portable == expected, "width \(width), seed \(random.seed)")
            if avx2 {
                var fast = [Float](repeating: -1, count: 4 * width)
                iec_rgb_to_float4_avx2(rgb, width, &fast)
                #expect(fast == expected, "AVX2, width \(width), seed \(random.seed)")
            }
        }
    }

    @Test("the masking field's luma and row sums: AVX2 and portable give the integers written out here, blocks alone and in runs of eight")
    func maskingRow() throws {
        var random = SeededGenerator()
        let avx2 = iec_kernels_cpu_has_avx2() == 1
        for _ in 0..<100 {
            // Past 72 pixels a row has runs of eight interior blocks, which AVX2 sums together.
            let width = Int.random(in: 1...200, using: &random)
            let rgb = (0..<(3 * width)).map { _ in UInt8.random(in: 0...255, using: &random) }
            let expectedLuma = (0..<width).map { (x: Int) -> Int32 in
                let (r, g, b) = (Int32(rgb[3 * x]), Int32(rgb[3 * x + 1]), Int32(rgb[3 * x + 2]))
                return 77 * r + 150 * g + 29 * b
            }
            var (luma, fastLuma) = ([Int32](repeating: -1, count: width), [Int32](repeating: -1, count: width))
            iec_rgb_to_luma256_portable(rgb, width, &luma)
            #expect(luma == expectedLuma, "seed \(random.seed)")
            if avx2 {
                iec_rgb_to_luma256_avx2(rgb, width, &fastLuma)
                #expect(fastLuma == expectedLuma, "AVX2, seed \(random.seed)")
            }
            let rows = (0..<3).map { _ in (0..<width).map { _ in Int32.random(in: 0...65_280, using: &random) } }
            let blocks = (width + 7) / 8
            let start = (0..<blocks).map { _ in Float(Int.random(in: 0...100_000, using: &random)) }
            let expected = (0..<blocks).map { (block: Int) -> Float in
                var sum: Int32 = 0
                for x in (8 * block)..<min(8 * block + 8, width) {
                    let left = rows[1][max(x - 1, 0)], right = rows[1][min(x + 1, width - 1)]
                    sum += abs(4 * rows[1][x] - left - right - rows[0][x] - rows[2][x])
                }
                return start[block] + Float(sum)
            }
            var (portable, fast) = (start, start)
            iec_masking_row_portable(rows[0], rows[1], rows[2], width, &portable)
            #expect(portable == expected, "seed \(random.seed)")
            if avx2 {
                iec_masking_row_avx2(rows[0], rows[1], rows[2], width, &fast)
                #expect(fast == expected, "AVX2, seed \(random.seed)")
            }
        }
    }

    @Test("YCbCr rows to RGB: AVX2 and portable give the integers written out here, for 4:2:0 and 4:4:4, each blend, full and narrow range")
    func ycbcrToRGB() throws {
        var random = SeededGenerator()
        let avx2 = iec_kernels_cpu_has_avx2() == 1
        let matrices = [
            try #require(YCbCrMatrix(matrixCoefficients: 6, fullRange: true)), try #require(YCbCrMatrix(matrixCoefficients: 1, fullRange: false)),
            try #require(YCbCrMatrix(matrixCoefficients: 9, fullRange: true))
        ]
        for _ in 0..<200 {
            let width = Int.random(in: 1...90, using: &random)
            let shift = Int.random(in: 0...1, using: &random)
            let chromaWidth = shift == 1 ? (width + 1) / 2 : width
            let quarters = [3, 4].randomElement(using: &random)!
            let row = { (count: Int) in (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) } }
            let (luma, cbNear, crNear, cbFar, crFar) = (row(width), row(chromaWidth), row(chromaWidth), row(chromaWidth), row(chromaWidth))
            var matrix = matrices.randomElement(using: &random)!.coefficients
            // Chroma at column x in eighths: the vertical blend in quarters, times two on a
            // sample's own column, plus the next sample's blend between two.
            func blend(_ near: [UInt8], _ far: [UInt8], _ i: Int) -> Int { quarters * Int(near[i]) + (4 - quarters) * Int(far[i]) }
            func eighths(_ near: [UInt8], _ far: [UInt8], _ x: Int) -> Int {
                guard shift == 1, x % 2 == 1 else { return 2 * blend(near, far, x >> shift) - 1024 }
                return blend(near, far, x / 2) + blend(near, far, min(x / 2 + 1, chromaWidth - 1)) - 1024
            }
            func level(_ q19: Int) -> UInt8 { UInt8(min(255, max(0, (q19 + (1 << 18)) >> 19))) }
            var expected: [UInt8] = []
            for x in 0..<width {
                let y = (Int(luma[x]) - Int(matrix.luma_offset)) * Int(matrix.luma) * 8
                let (b, r) = (eighths(cbNear, cbFar, x), eighths(crNear, crFar, x))
                expected += [
                    level(y + Int(matrix.cr_r) * r), level(y - Int(matrix.cb_g) * b - Int(matrix.cr_g) * r), level(y + Int(matrix.cb_b) * b)
                ]
            }
            var (rgb, fast) = ([UInt8](repeating: 0, count: 3 * width), [UInt8](repeating: 0, count: 3 * width))
            var scratch = [Int32](repeating: 0, count: 2 * chromaWidth)
            iec_ycbcr_to_rgb_row_portable(
                luma, cbNear, crNear, cbFar, crFar, Int32(quarters), Int32(shift), width, chromaWidth, &matrix, &scratch, &rgb)
            #expect(rgb == expected, "width \(width), shift \(shift), quarters \(quarters), seed \(random.seed)")
            if avx2 {
                iec_ycbcr_to_rgb_row_avx2(
                    luma, cbNear, crNear, cbFar, crFar, Int32(quarters), Int32(shift), width, chromaWidth, &matrix, &scratch, &fast)
                #expect(fast == expected, "AVX2, width \(width), shift \(shift), quarters \(quarters), seed \(random.seed)")
            }
        }
    }

    @Test("BT.601 at full range is libheif's default: Y 128 with neutral chroma is 128, pure Cr is red, narrow range stretches 16...235")
    func ycbcrMatrices() throws {
        func convert(_ y: UInt8, _ cb: UInt8, _ cr: UInt8, _ matrix: YCbCrMatrix) -> [UInt8] {
            var coefficients = matrix.coefficients
            var (rgb, scratch) = ([UInt8](repeating: 0, count: 3), [Int32](repeating: 0, count: 2))
            iec_ycbcr_to_rgb_row([y], [cb], [cr], [cb], [cr], 4, 0, 1, 1, &coefficients, &scratch, &rgb)
            return rgb
        }
        let full = try #require(YCbCrMatrix(matrixCoefficients: 6, fullRange: true))
        let narrow = try #require(YCbCrMatrix(matrixCoefficients: 6, fullRange: false))
        #expect(convert(128, 128, 128, full) == [128, 128, 128])
        // Cr 255 → R = Y + 1.402 × 127 = 306 (clamped), G = Y − 0.714 × 127 = 37.3, B = Y.
        #expect(convert(128, 128, 255, full) == [255, 37, 128])
        #expect(convert(16, 128, 128, narrow) == [0, 0, 0] && convert(235, 128, 128, narrow) == [255, 255, 255])
        // BT.709's blue: Y + 1.8556 × Cb' where BT.601 has 1.772.
        let bt709 = try #require(YCbCrMatrix(matrixCoefficients: 1, fullRange: true))
        #expect(convert(100, 178, 128, bt709)[2] == 193 && convert(100, 178, 128, full)[2] == 189)
        // Identity, YCgCo and ICtCp are not a Kr/Kb weighting: left to the library.
        #expect(YCbCrMatrix(matrixCoefficients: 0, fullRange: true) == nil && YCbCrMatrix(matrixCoefficients: 8, fullRange: true) == nil)
        #expect(YCbCrMatrix(matrixCoefficients: 14, fullRange: true) == nil)
    }

    @Test("the metrics' symmetric Gaussian: AVX2 and portable give identical floats, centre first, then the pairs from the outside in")
    func symmetricConvolution() throws {
        var random = SeededGenerator()
        let avx2 = iec_kernels_cpu_has_avx2() == 1
        for _ in 0..<200 {
            let count = Int.random(in: 0...300, using: &random)
            let radius = Int.random(in: 0...7, using: &random)
            let taps = 2 * radius + 1
            // Lines anywhere in one buffer, overlapping as a horizontal pass's shifted rows do;
            // exactly `count` floats from the last start, so nothing past a line is read (ASan).
            let buffer = (0..<(count + 3 * taps)).map { _ in Float.random(in: -300...300, using: &random) }
            let starts = (0..<taps).map { _ in Int.random(in: 0...(3 * taps), using: &random) }
            let window = (0..<taps).map { _ in Float.random(in: 0...0.4, using: &random) }
            var (portable, fast, chosen) = (
                [Float](repeating: .nan, count: count), [Float](repeating: .nan, count: count), [Float](repeating: .nan, count: count)
            )
            buffer.withUnsafeBufferPointer { buffer in
                let lines: [UnsafePointer<Float>?] = starts.map { buffer.baseAddress! + $0 }
                iec_convolve_symmetric_portable(lines, window, Int32(radius), &portable, count)
                if avx2 { iec_convolve_symmetric_avx2(lines, window, Int32(radius), &fast, count) }
                iec_convolve_symmetric(lines, window, Int32(radius), &chosen, count)
            }
            for x in 0..<count {
                var expected = window[radius] * buffer[starts[radius] + x]
                for tap in 0..<radius {
                    let pair = buffer[starts[tap] + x] + buffer[starts[taps - 1 - tap] + x]
                    let product = window[tap] * pair
                    expected = expected + product
                }
                let message: Comment = "x \(x) of \(count), radius \(radius), seed \(random.seed)"
                #expect(portable[x].bitPattern == expected.bitPattern, message)
                if avx2 { #expect(fast[x].bitPattern == expected.bitPattern, message) }
                #expect(chosen[x].bitPattern == expected.bitPattern, message)
            }
        }
    }

    @Test("SSIMULACRA2's positive XYB: AVX2 and portable give identical floats, in the order written out here")
    func positiveXYB() throws {
        var random = SeededGenerator()
        let avx2 = iec_kernels_cpu_has_avx2() == 1
        for _ in 0..<100 {
            let count = Int.random(in: 0...70, using: &random)
            let matrix = (0..<9).map { _ in Float.random(in: -0.1...0.8, using: &random) }
            let bias = Float.random(in: 0.001...0.01, using: &random)
            let biasRoot = Float(cbrt(Double(bias)))
            // Linear light, a few negatives to reach the clamp; exactly `count` floats each (ASan).
            let input = (0..<3).map { _ in (0..<count).map { _ in Float.random(in: -0.05...1.2, using: &random) } }
            var (r, g, b) = (input[0], input[1], input[2])
            iec_positive_xyb_portable(&r, &g, &b, count, matrix, bias, biasRoot)
            let portable = [r, g, b]
            (r, g, b) = (input[0], input[1], input[2])
            if avx2 { iec_positive_xyb_avx2(&r, &g, &b, count, matrix, bias, biasRoot) }
            let fast = [r, g, b]
            for x in 0..<count {
                var mixed: [Float] = []
                for row in 0..<3 {
                    var sum = matrix[3 * row] * input[0][x]
                    sum = sum + matrix[3 * row + 1] * input[1][x]
                    sum = sum + matrix[3 * row + 2] * input[2][x]
                    sum = sum + bias
                    let value = 0.5 * (sum + abs(sum))
                    var guess = Float(bitPattern: value.bitPattern / 3 &+ 709_921_077)
                    for _ in 0..<2 {
                        let square = guess * guess
                        let excess = square * guess - value
                        guess = guess - excess / (3 * square)
                    }
                    mixed.append((value <= 0 ? 0 : guess) - biasRoot)
                }
                let y = 0.5 * (mixed[0] + mixed[1])
                let expected: [Float] = [0.5 * (mixed[0] - mixed[1]) * 14 + 0.42, y + 0.01, (mixed[2] - y) + 0.55]
                for plane in 0..<3 {
                    let message: Comment = "pixel \(x) of \(count), plane \(plane), seed \(random.seed)"
                    #expect(portable[plane][x].bitPattern == expected[plane].bitPattern, message)
                    if avx2 { #expect(fast[plane][x].bitPattern == expected[plane].bitPattern, message) }
                }
            }
        }
    }

    @Test(
        "the metrics' row maps: AVX2 and portable give identical lane sums, each pixel's map (and the one-pixel functions) in the order written out here"
    )
    func metricRowLanes() throws {
        var random = SeededGenerator()
        let avx2 = iec_kernels_cpu_has_avx2() == 1
        let (c1, c2) = (Float(6.5025), Float(58.5225))
        func positive(_ value: Float) -> Float { 0.5 * (value + abs(value)) }
        func fourth(_ value: Float) -> Float { (value * value) * (value * value) }
        for round in 0..<100 {
            let count = Int.random(in: 0...70, using: &random)
            // Seven planes of statistics, exactly `count` floats each (ASan); means near the
            // samples, mean squares above their squares, as a window's are.
            let planes = (0..<7).map { _ in (0..<count).map { _ in Float.random(in: 0...1.3, using: &random) } }
            let withSSIM = round % 3 != 0
            let message: Comment = "\(count) pixels, seed \(random.seed)"
            // SSIM: mx, xx, my, yy, xy.
            var (portable, fast, chosen) = (
                [Float](repeating: .nan, count: 8), [Float](repeating: .nan, count: 8), [Float](repeating: .nan, count: 8)
            )
            let summed = iec_ssim_row_lanes_portable(planes[0], planes[1], planes[2], planes[3], planes[4], count, c1, c2, &portable)
            if avx2 { #expect(iec_ssim_row_lanes_avx2(planes[0], planes[1], planes[2], planes[3], planes[4], count, c1, c2, &fast) == summed) }
            #expect(iec_ssim_row_lanes(planes[0], planes[1], planes[2], planes[3], planes[4], count, c1, c2, &chosen) == summed)
            #expect(summed == count / 8 * 8, message)
            var expected = [Float](repeating: 0, count: 8)
            // Every pixel: summed into its lane, and one at a time as the caller sums the last few.
            for x in 0..<count {
                let (mx, xx, my, yy, xy) = (planes[0][x], planes[1][x], planes[2][x], planes[3][x], planes[4][x])
                let numerator = (2 * (mx * my) + c1) * (2 * (xy - mx * my) + c2)
                let denominator = ((mx * mx + my * my) + c1) * (((xx - mx * mx) + (yy - my * my)) + c2)
                let map = numerator / denominator
                #expect(iec_ssim_pixel(mx, xx, my, yy, xy, c1, c2).bitPattern == map.bitPattern, message)
                if x < summed { expected[x % 8] = expected[x % 8] + map }
            }
            #expect(portable.map(\.bitPattern) == expected.map(\.bitPattern), message)
            if avx2 { #expect(fast.map(\.bitPattern) == expected.map(\.bitPattern), message) }
            #expect(chosen.map(\.bitPattern) == expected.map(\.bitPattern), message)
            // SSIMULACRA2: x1, mu1, s11, x2, mu2, s22, s12.
            var (portable2, fast2) = ([Float](repeating: .nan, count: 48), [Float](repeating: .nan, count: 48))
            let p = planes
            #expect(
                iec_ssimulacra2_row_lanes_portable(p[0], p[1], p[2], p[3], p[4], p[5], p[6], count, withSSIM ? 1 : 0, 0.0009, &portable2) == summed)
            if avx2 {
                #expect(iec_ssimulacra2_row_lanes_avx2(p[0], p[1], p[2], p[3], p[4], p[5], p[6], count, withSSIM ? 1 : 0, 0.0009, &fast2) == summed)
            }
            var expected2 = [Float](repeating: 0, count: 48)
            for x in 0..<count {
                var ssim: Float = 0
                if withSSIM {
                    let difference = p[1][x] - p[4][x]
                    let luminance = 1 - difference * difference
                    let structure = 2 * (p[6][x] - p[1][x] * p[4][x]) + 0.0009
                    let variances = ((p[2][x] - p[1][x] * p[1][x]) + (p[5][x] - p[4][x] * p[4][x])) + 0.0009
                    ssim = positive(1 - (luminance * structure) / variances)
                }
                let edge = (1 + abs(p[3][x] - p[4][x])) / (1 + abs(p[0][x] - p[1][x])) - 1
                let (artefact, lost) = (positive(edge), positive(-edge))
                let terms = [ssim, fourth(ssim), artefact, fourth(artefact), lost, fourth(lost)]
                var pixel = [Float](repeating: .nan, count: 6)
                iec_ssimulacra2_pixel(p[0][x], p[1][x], p[2][x], p[3][x], p[4][x], p[5][x], p[6][x], withSSIM ? 1 : 0, 0.0009, &pixel)
                #expect(pixel.map(\.bitPattern) == terms.map(\.bitPattern), message)
                guard x < summed else { continue }
                for term in (withSSIM ? 0 : 2)..<6 { expected2[8 * term + x % 8] = expected2[8 * term + x % 8] + terms[term] }
            }
            #expect(portable2.map(\.bitPattern) == expected2.map(\.bitPattern), message)
            if avx2 { #expect(fast2.map(\.bitPattern) == expected2.map(\.bitPattern), message) }
        }
    }

    @Test("IMAGE_ENGINE_PORTABLE_KERNELS=1 chooses the portable versions; otherwise AVX2 where the CPU has it")
    func choice() {
        let forced = ProcessInfo.processInfo.environment["IMAGE_ENGINE_PORTABLE_KERNELS"].map { !$0.isEmpty && $0 != "0" } ?? false
        #expect(iec_kernels_level() == (forced ? 0 : iec_kernels_cpu_has_avx2()))
    }
}
