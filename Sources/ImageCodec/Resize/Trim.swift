/// Borders to cut off before anything else (imgproxy's `trim`, libvips' `find_trim`): the
/// frame of background around a product photographed on a white sweep, or the bars of a
/// letterboxed picture. The region, the resize and its gravity then apply to what is left as
/// if it were the whole image.
///
/// A pixel is content when, after a 3 × 3 median (which ignores dust and JPEG ringing), one of
/// its channels differs from the background by more than `threshold`. What is kept is the
/// smallest rectangle holding every content pixel; an image with none (flat) is kept whole.
/// Transparent pixels are first flattened on magenta, as imgproxy does, so a transparent
/// border is trimmed when the background is taken from the corner.
///
/// The window is found on a decode of its own before the real one: at full size when nothing
/// is resized, otherwise at twice the box's longest side or minimum side (at least 1024 pixels), so the cut is
/// exact to within a pixel of the output. ``ImageSource/plan(_:)`` counts that decode.
///
/// ```swift
/// var options = DecodingOptions(resize: .fill(width: 400, height: 400))
/// options.trim = Trim(threshold: 10)                // background: the top-left pixel
/// options.trim = Trim(threshold: 10, color: .white, equalHorizontal: true)
/// ```
public struct Trim: Sendable, Hashable, CustomStringConvertible {
    /// How far (0-255 per channel, in sRGB values) a pixel may be from the background and still
    /// be background.
    public var threshold: Double
    /// The background's colour; nil: the top-left pixel's.
    public var color: RGBColor?
    /// Cut as much from the right as from the left: the lesser of the two borders on both sides,
    /// so a centred subject stays centred.
    public var equalHorizontal: Bool
    /// Cut as much from the bottom as from the top.
    public var equalVertical: Bool

    /// A trim of everything within `threshold` of `color` (nil: the top-left pixel's colour).
    public init(threshold: Double, color: RGBColor? = nil, equalHorizontal: Bool = false, equalVertical: Bool = false) {
        self.threshold = threshold
        self.color = color
        self.equalHorizontal = equalHorizontal
        self.equalVertical = equalVertical
    }

    /// The largest threshold: one past it, no pixel differs from any background.
    public static let maximumThreshold = 255.0

    /// Throws `invalidArgument` for a threshold outside 0…``maximumThreshold`` or not a number.
    public func validate() throws(ImageCodecError) {
        guard threshold.isFinite, (0...Self.maximumThreshold).contains(threshold) else {
            throw .invalidArgument("a trim threshold must be 0-\(Int(Self.maximumThreshold)), got \(threshold)")
        }
    }

    /// A canonical text form, e.g. `trim:10:ffffff:equal-horizontal`, for cache keys.
    public var description: String {
        "trim:\(threshold):\(color?.hex ?? "corner")" + (equalHorizontal ? ":equal-horizontal" : "")
            + (equalVertical ? ":equal-vertical" : "")
    }

    /// The longest side of the decode the window is found on, for a resize whose box's longest
    /// side is `boxSide` (nil: no resize, the image's own pixels).
    static func analysisSide(boxSide: Int?) -> Int? {
        boxSide.map { max(1024, 2 * $0) }
    }

    /// The rectangle to keep in `bitmap`, in its pixels; nil when nothing is cut (no border,
    /// or no content at all). Each row or column scanned is a checkpoint's worth of work: a
    /// cancelled task stops here (a uniform image is scanned whole).
    func window(in bitmap: Bitmap) throws(ImageCodecError) -> PixelRect? {
        let (width, height, channels) = (bitmap.width, bitmap.height, bitmap.format.channels)
        guard width > 0, height > 0 else { return nil }
        // Grey and colour alike as RGB, alpha flattened on magenta (libvips' and imgproxy's).
        let hasAlpha = bitmap.format == .rgba || bitmap.format == .grayAlpha
        let pixels = bitmap.pixels
        func rgb(_ x: Int, _ y: Int) -> SIMD3<Int32> {
            let at = (y * width + x) * channels
            let colour =
                channels >= 3
                ? SIMD3(Int32(pixels[at]), Int32(pixels[at + 1]), Int32(pixels[at + 2]))
                : SIMD3(repeating: Int32(pixels[at]))
            guard hasAlpha else { return colour }
            let alpha = Int32(pixels[at + channels - 1])
            let magenta = SIMD3<Int32>(255, 0, 255)
            return (colour &* alpha &+ magenta &* (255 - alpha) &+ 127) / 255
        }
        let background = color.map { SIMD3(Int32($0.red), Int32($0.green), Int32($0.blue)) } ?? rgb(0, 0)
        // 8-bit values differ by more than a fractional threshold once they differ by its floor + 1.
        let limit = Int32(threshold.rounded(.down))
        func differs(_ colour: SIMD3<Int32>) -> Bool {
            let distance = colour &- background
            return any(distance .> SIMD3(repeating: limit)) || any(distance .< SIMD3(repeating: -limit))
        }
        // Content: the pixel and the median of its 3 × 3 neighbourhood (edges repeated) both
        // differ. libvips tests the median alone; requiring the pixel too saves the median on the
        // background, and can only move an edge by the one pixel a median reaches.
        func isContent(_ x: Int, _ y: Int) -> Bool {
            guard differs(rgb(x, y)) else { return false }
            // The nine neighbours a channel at a time, in registers: sorted by insertion, the
            // fifth is the median.
            var median = SIMD3<Int32>()
            for channel in 0..<3 {
                var values = SIMD16<Int32>(repeating: .max)
                var count = 0
                for dy in -1...1 {
                    for dx in -1...1 {
                        let value = rgb(min(max(x + dx, 0), width - 1), min(max(y + dy, 0), height - 1))[channel]
                        var slot = count
                        while slot > 0, values[slot - 1] > value {
                            values[slot] = values[slot - 1]
                            slot -= 1
                        }
                        values[slot] = value
                        count += 1
                    }
                }
                median[channel] = values[4]
            }
            return differs(median)
        }
        var checkpoint = CancellationCheckpoint()
        func rowHasContent(_ y: Int, _ columns: Range<Int>) throws(ImageCodecError) -> Bool {
            try checkpoint.advance(by: columns.count)
            for x in columns where isContent(x, y) { return true }
            return false
        }
        func columnHasContent(_ x: Int, _ rows: Range<Int>) throws(ImageCodecError) -> Bool {
            try checkpoint.advance(by: rows.count)
            for y in rows where isContent(x, y) { return true }
            return false
        }
        var top: Int?
        for y in 0..<height where try rowHasContent(y, 0..<width) {
            top = y
            break
        }
        guard let top else { return nil }
        var bottom = top
        for y in (top..<height).reversed() where try rowHasContent(y, 0..<width) {
            bottom = y
            break
        }
        let rows = top..<(bottom + 1)
        var left = 0
        for x in 0..<width where try columnHasContent(x, rows) {
            left = x
            break
        }
        var right = left
        for x in (left..<width).reversed() where try columnHasContent(x, rows) {
            right = x
            break
        }
        var (x0, x1, y0, y1) = (left, right + 1, top, bottom + 1)
        // libvips' rule: both sides lose the smaller border.
        if equalHorizontal { (x0, x1) = (min(x0, width - x1), width - min(x0, width - x1)) }
        if equalVertical { (y0, y1) = (min(y0, height - y1), height - min(y0, height - y1)) }
        guard x0 > 0 || y0 > 0 || x1 < width || y1 < height else { return nil }
        return PixelRect(x: Double(x0), y: Double(y0), width: Double(x1 - x0), height: Double(y1 - y0))
    }
}
