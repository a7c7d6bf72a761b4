/// SSIMULACRA2's Gaussian blur of one plane: σ 1.5 over the same 11 taps as SSIM's window,
/// zero beyond the left and right edges, mirrored (the edge pixel repeated) beyond the top and
/// bottom — the borders of the PyPI `ssimulacra2` package that outside checks score with.
/// Separable, horizontal then vertical, each pass through SSIM's `convolve`. Horizontally
/// blurred rows wait in a ring of window height, made as the vertical pass first needs them:
/// a whole horizontally blurred plane (4 MB at 1280×800) written and read back cost more than
/// the arithmetic.
struct PlaneBlur {
    let width: Int
    let height: Int
    private var padded: [Float]
    private var ring: [Float]

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        padded = [Float](repeating: 0, count: width + 2 * StructuralSimilarity.radius)
        ring = ColorPlanes.uninitialized(width * (2 * StructuralSimilarity.radius + 1))
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
        let taps = 2 * radius + 1
        if out.count != width * height { out = ColorPlanes.uninitialized(width * height) }
        StructuralSimilarity.window.withUnsafeBufferPointer { window in
            let window = window.baseAddress!
            padded.withUnsafeMutableBufferPointer { padded in
                ring.withUnsafeMutableBufferPointer { ring in
                    out.withUnsafeMutableBufferPointer { out in
                        let rows = ring.baseAddress!
                        var next = 0
                        for y in 0..<height {
                            // Rows: the zeros either side of `padded` stay zero; only the middle is
                            // copied. Row r waits in slot r mod taps: the rows a column needs,
                            // mirrored ones included, are at most `taps` consecutive ones.
                            while next <= Swift.min(height - 1, y + radius) {
                                fill(next, padded.baseAddress! + radius)
                                let line = UnsafePointer(padded.baseAddress!)
                                StructuralSimilarity.convolve(window, into: rows + (next % taps) * width, count: width) { line + $0 }
                                next += 1
                            }
                            // Columns: rows past the top or bottom mirror back in (`radius` < 8 ≤
                            // height, so one reflection always lands inside).
                            StructuralSimilarity.convolve(window, into: out.baseAddress! + y * width, count: width) { tap in
                                var row = y - radius + tap
                                if row < 0 { row = -row - 1 } else if row >= height { row = 2 * height - row - 1 }
                                return UnsafePointer(rows + (row % taps) * width)
                            }
                        }
                    }
                }
            }
        }
    }
}
