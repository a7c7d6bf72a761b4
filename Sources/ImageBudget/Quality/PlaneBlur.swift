/// SSIMULACRA2's Gaussian blur of one plane: σ 1.5 over the same 11 taps as SSIM's window,
/// zero beyond the left and right edges, mirrored (the edge pixel repeated) beyond the top and
/// bottom — the borders of the PyPI `ssimulacra2` package that outside checks score with.
/// Separable, horizontal then vertical, each pass through SSIM's `convolve`.
struct PlaneBlur {
    let width: Int
    let height: Int
    private var padded: [Float]
    private var horizontal: [Float]

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        padded = [Float](repeating: 0, count: width + 2 * StructuralSimilarity.radius)
        horizontal = ColorPlanes.uninitialized(width * height)
    }

    /// `out` = the blur of `plane` (`width × height`).
    mutating func blur(_ plane: [Float], into out: inout [Float]) {
        let width = width
        plane.withUnsafeBufferPointer { plane in
            blur(into: &out) { y, row in row.update(from: plane.baseAddress! + y * width, count: width) }
        }
    }

    /// `out` = the blur of `a · b`, pixel by pixel. The products are made a row at a time as
    /// the horizontal pass needs them: a product plane written and read back cost more than
    /// the multiplications.
    mutating func blur(_ a: [Float], times b: [Float], into out: inout [Float]) {
        let width = width
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                blur(into: &out) { y, row in
                    let (left, right) = (a.baseAddress! + y * width, b.baseAddress! + y * width)
                    for x in 0..<width { row[x] = left[x] * right[x] }
                }
            }
        }
    }

    /// The blur of the plane whose row y `fill(y, row)` writes into `row` (`width` floats).
    private mutating func blur(into out: inout [Float], fill: (Int, UnsafeMutablePointer<Float>) -> Void) {
        let (width, height, radius) = (width, height, StructuralSimilarity.radius)
        if out.count != width * height { out = ColorPlanes.uninitialized(width * height) }
        StructuralSimilarity.window.withUnsafeBufferPointer { window in
            let window = window.baseAddress!
            padded.withUnsafeMutableBufferPointer { padded in
                horizontal.withUnsafeMutableBufferPointer { horizontal in
                    // Rows: the zeros either side of `padded` stay zero; only the middle is copied.
                    for y in 0..<height {
                        fill(y, padded.baseAddress! + radius)
                        let line = UnsafePointer(padded.baseAddress!)
                        StructuralSimilarity.convolve(window, into: horizontal.baseAddress! + y * width, count: width) { line + $0 }
                    }
                    // Columns: rows past the top or bottom mirror back in (`radius` < 8 ≤ height,
                    // so one reflection always lands inside).
                    out.withUnsafeMutableBufferPointer { out in
                        let rows = UnsafePointer(horizontal.baseAddress!)
                        for y in 0..<height {
                            StructuralSimilarity.convolve(window, into: out.baseAddress! + y * width, count: width) { tap in
                                var row = y - radius + tap
                                if row < 0 { row = -row - 1 } else if row >= height { row = 2 * height - row - 1 }
                                return rows + row * width
                            }
                        }
                    }
                }
            }
        }
    }
}
