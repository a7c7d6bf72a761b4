import CImageKernels
import Foundation
import Testing
import TestSupport

/// The C kernels' two versions give the same bits: the resampler's vertical pass over random
/// rows, weights, tap counts and lengths (tails of every size), the AVX2 version against the
/// portable one. CI runs the codec suite a second time with IMAGE_ENGINE_PORTABLE_KERNELS=1,
/// so the golden hashes hold on both.
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

    @Test("IMAGE_ENGINE_PORTABLE_KERNELS=1 chooses the portable versions; otherwise AVX2 where the CPU has it")
    func choice() {
        let forced = ProcessInfo.processInfo.environment["IMAGE_ENGINE_PORTABLE_KERNELS"].map { !$0.isEmpty && $0 != "0" } ?? false
        #expect(iec_kernels_level() == (forced ? 0 : iec_kernels_cpu_has_avx2()))
    }
}
