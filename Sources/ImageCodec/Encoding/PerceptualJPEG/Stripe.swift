import CImageKernels

/// One iMCU row of the image as level-shifted float planes: luma and full-resolution chroma
/// (8 × vSamp rows, edges replicated out to whole MCUs), and chroma averaged down to its
/// sampling (8 rows). Allocated once per encode and refilled for every iMCU row.
struct Stripe: ~Copyable {
    private let bitmap: Bitmap
    private let hSamp: Int
    private let vSamp: Int
    /// Samples across a luma row: the luma blocks × 8.
    private let width: Int
    private let chromaWidth: Int
    private let luma: UnsafeMutablePointer<Float>
    private let blue: UnsafeMutablePointer<Float>
    private let red: UnsafeMutablePointer<Float>
    /// Downsampled Cb then Cr, chromaWidth × 8 each.
    private let chroma: UnsafeMutablePointer<Float>
    private let colour: Bool
    /// What holds the planes' bytes in the ledger.
    private let charge: MemoryCharge?

    init(bitmap: Bitmap, lumaBlocksWide: Int, hSamp: Int, vSamp: Int) throws(ImageCodecError) {
        self.bitmap = bitmap
        self.hSamp = hSamp
        self.vSamp = vSamp
        width = lumaBlocksWide * 8
        chromaWidth = width / hSamp
        colour = bitmap.format.channels >= 3
        let planeSize = width * 8 * vSamp
        let floats = planeSize + (colour ? 2 * planeSize + 2 * chromaWidth * 8 : 0)
        charge = try MemoryLedger.current?.charge(floats * MemoryLayout<Float>.stride)
        luma = .allocate(capacity: planeSize) // charged: above, with the other planes
        blue = .allocate(capacity: colour ? planeSize : 0) // charged: above
        red = .allocate(capacity: colour ? planeSize : 0) // charged: above
        chroma = .allocate(capacity: colour ? 2 * chromaWidth * 8 : 0) // charged: above
    }

    deinit {
        luma.deallocate()
        blue.deallocate()
        red.deallocate()
        chroma.deallocate()
    }

    /// Converts the source rows of iMCU row `index` (JFIF's full-range BT.601 YCbCr, minus 128),
    /// repeating the last column and row out to whole MCUs.
    func load(iMCURow index: Int) {
        let rows = 8 * vSamp, channels = bitmap.format.channels
        let sourceWidth = bitmap.width, lastRow = bitmap.height - 1
        let (width, luma, blue, red) = (width, luma, blue, red)
        bitmap.pixels.withUnsafeBufferPointer { pixels in
            let base = pixels.baseAddress!
            for y in 0..<rows {
                let source = base + min(index * rows + y, lastRow) * sourceWidth * channels
                let at = y * width
                if channels < 3 {
                    for x in 0..<sourceWidth { luma[at + x] = Float(source[x]) - 128 }
                } else {
                    // In CImageKernels: AVX2 where the CPU has it, the same floats everywhere.
                    iec_rgb_to_ycbcr(source, sourceWidth, luma + at, blue + at, red + at)
                }
                for x in sourceWidth..<width {
                    luma[at + x] = luma[at + sourceWidth - 1]
                    if channels >= 3 {
                        blue[at + x] = blue[at + sourceWidth - 1]
                        red[at + x] = red[at + sourceWidth - 1]
                    }
                }
            }
        }
    }

    /// Averages each hSamp × vSamp group of chroma samples.
    func downsampleChroma() {
        let (hSamp, vSamp, width, chromaWidth) = (hSamp, vSamp, width, chromaWidth)
        let weight = 1 / Float(hSamp * vSamp)
        for (plane, source) in [blue, red].enumerated() {
            let output = chroma + plane * chromaWidth * 8
            if hSamp == 1 && vSamp == 1 {
                output.update(from: source, count: chromaWidth * 8)
                continue
            }
            if hSamp == 2 {
                // Eight outputs at a time: the even and odd samples of 16, from one or two rows.
                for y in 0..<8 {
                    let top = source + y * vSamp * width, bottom = top + (vSamp - 1) * width
                    for x in stride(from: 0, to: chromaWidth, by: 8) {
                        let pairs =
                            vSamp == 2
                            ? UnsafeRawPointer(top + 2 * x).loadUnaligned(as: SIMD16<Float>.self)
                                + UnsafeRawPointer(bottom + 2 * x).loadUnaligned(as: SIMD16<Float>.self)
                            : UnsafeRawPointer(top + 2 * x).loadUnaligned(as: SIMD16<Float>.self)
                        UnsafeMutableRawPointer(output + y * chromaWidth + x).storeBytes(
                            of: (pairs.evenHalf + pairs.oddHalf) * weight, as: SIMD8<Float>.self)
                    }
                }
                continue
            }
            for y in 0..<8 {
                for x in 0..<chromaWidth {
                    var sum: Float = 0
                    for dy in 0..<vSamp {
                        let row = source + (y * vSamp + dy) * width + x * hSamp
                        for dx in 0..<hSamp { sum += row[dx] }
                    }
                    output[y * chromaWidth + x] = sum * weight
                }
            }
        }
    }

    /// Where a row of blocks lies in a plane: block b's row y is the 8 floats at
    /// `first + 8b + stride·y`.
    struct BlockRow {
        let first: UnsafePointer<Float>
        let stride: Int
    }

    /// Luma block row `row` (0..<vSamp) of this stripe.
    func luma(row: Int) -> BlockRow {
        BlockRow(first: luma + row * 8 * width, stride: width)
    }

    /// The block row of chroma component 1 (Cb) or 2 (Cr), downsampled.
    func chroma(_ component: Int) -> BlockRow {
        BlockRow(first: chroma + (component - 1) * chromaWidth * 8, stride: chromaWidth)
    }
}
