/// A rectangle in fractional pixels: (0, 0) is the top-left corner of the top-left pixel, so
/// pixel (i, j) covers [i, i + 1) × [j, j + 1).
struct PixelRect: Hashable, Sendable {
    var x: Double
    var y: Double
    var width: Double
    var height: Double

    /// The whole of a `width × height` image.
    init(width: Int, height: Int) {
        self.init(x: 0, y: 0, width: Double(width), height: Double(height))
    }

    init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    var maxX: Double { x + width }
    var maxY: Double { y + height }

    /// The whole pixels the rectangle touches, clamped to a `width × height` image.
    func columns(within width: Int) -> Range<Int> {
        Self.span(x, maxX, within: width)
    }

    func rows(within height: Int) -> Range<Int> {
        Self.span(y, maxY, within: height)
    }

    /// The rectangle scaled by `sx` horizontally and `sy` vertically (about the origin).
    func scaled(_ sx: Double, _ sy: Double) -> PixelRect {
        PixelRect(x: x * sx, y: y * sy, width: width * sx, height: height * sy)
    }

    /// The rectangle with its origin moved by (-`dx`, -`dy`).
    func offset(by dx: Int, _ dy: Int) -> PixelRect {
        PixelRect(x: x - Double(dx), y: y - Double(dy), width: width, height: height)
    }

    private static func span(_ start: Double, _ end: Double, within size: Int) -> Range<Int> {
        let first = min(max(0, Int(start.rounded(.down))), max(0, size - 1))
        let last = min(size, max(first + 1, Int(end.rounded(.up))))
        return first..<last
    }
}
