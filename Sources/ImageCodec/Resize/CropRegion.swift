/// A part of the upright image to keep before anything else (imgproxy's `crop`): the resize,
/// its gravity and the output size then apply to that part as if it were the whole image.
///
/// Each side is a number of pixels, a fraction of the image's side, or the whole side; a side
/// larger than the image's is the whole side. The region is placed by `gravity` as a fill's
/// crop is (a focus point centres it, `smart` finds the point first). Decoders crop while
/// decoding, so a region of a large photo costs what the region costs, not the photo.
///
/// ```swift
/// // The left half of a product shot, then a 400×400 fill of it.
/// var options = DecodingOptions(resize: .fill(width: 400, height: 400))
/// options.region = CropRegion(width: .fraction(0.5), height: .whole, gravity: .west)
/// ```
public struct CropRegion: Sendable, Hashable, CustomStringConvertible {
    /// One side of the region.
    public enum Length: Sendable, Hashable {
        /// This many pixels of the upright image (at least 1).
        case pixels(Int)
        /// This fraction of the image's side, in (0, 1); rounded to whole pixels, at least 1.
        case fraction(Double)
        /// The image's whole side.
        case whole

        /// A side as imgproxy's `crop` and the CLI's `--crop` write it: 0 the whole side, below
        /// 1 a fraction, 1 and more whole pixels (the fraction of a pixel dropped). Never traps:
        /// a negative number or NaN becomes a fraction and a huge one `Int.max` pixels, which
        /// ``CropRegion/validate(maxDimension:)`` refuses.
        public init(_ number: Double) {
            if number == 0 {
                self = .whole
            } else if number < 1 || number.isNaN {
                self = .fraction(number)
            } else {
                self = .pixels(number < 0x1p62 ? Int(number) : .max)
            }
        }
    }

    /// The region's width.
    public var width: Length
    /// The region's height.
    public var height: Length
    /// Where the region sits in the image.
    public var gravity: Gravity
    /// How far the region moves from where `gravity` puts it, in the image's pixels (or
    /// fractions of its sides).
    public var offset: GravityOffset

    /// A region of `width × height` placed by `gravity`, moved by `offset`.
    public init(width: Length, height: Length, gravity: Gravity = .centre, offset: GravityOffset = .zero) {
        self.width = width
        self.height = height
        self.gravity = gravity
        self.offset = offset
    }

    /// A canonical text form, e.g. `crop:400x0.5:north`, for cache keys.
    public var description: String {
        func text(_ length: Length) -> String {
            switch length {
            case .pixels(let count): "\(count)"
            case .fraction(let fraction): "\(fraction)"
            case .whole: "0"
            }
        }
        return "crop:\(text(width))x\(text(height)):\(gravity)" + (offset == .zero ? "" : ":\(offset)")
    }

    /// Throws `invalidArgument` for a side of fewer than 1 pixel or more than `maxDimension`,
    /// a fraction outside (0, 1), or an offset that is not finite or past `maxDimension`.
    public func validate(maxDimension: Int = DecodingLimits().maxDimension) throws(ImageCodecError) {
        try offset.validate(maxDimension: maxDimension)
        for length in [width, height] {
            switch length {
            case .pixels(let count):
                guard (1...maxDimension).contains(count) else {
                    throw .invalidArgument("a crop side must be 1-\(maxDimension) pixels, got \(count)")
                }
            case .fraction(let fraction):
                guard fraction.isFinite, fraction > 0, fraction < 1 else {
                    throw .invalidArgument("a crop fraction must be in (0, 1), got \(fraction)")
                }
            case .whole:
                break
            }
        }
    }

    /// The region's size in a `sourceWidth × sourceHeight` image, in whole pixels.
    public func size(sourceWidth: Int, sourceHeight: Int) -> (width: Int, height: Int) {
        func side(_ length: Length, _ total: Int) -> Int {
            switch length {
            case .pixels(let count): min(count, total)
            case .fraction(let fraction): min(total, max(1, Int((Double(total) * fraction).rounded())))
            case .whole: total
            }
        }
        return (side(width, sourceWidth), side(height, sourceHeight))
    }

    /// The region in a `sourceWidth × sourceHeight` image, on whole pixels.
    func rect(sourceWidth: Int, sourceHeight: Int) -> PixelRect {
        let (width, height) = size(sourceWidth: sourceWidth, sourceHeight: sourceHeight)
        let (totalWidth, totalHeight) = (Double(sourceWidth), Double(sourceHeight))
        let x = gravity.offset(
            length: Double(width), total: totalWidth, axis: .horizontal, shift: offset.shift(total: totalWidth, axis: .horizontal, pixelScale: 1)
        ).rounded(.down)
        let y = gravity.offset(
            length: Double(height), total: totalHeight, axis: .vertical, shift: offset.shift(total: totalHeight, axis: .vertical, pixelScale: 1)
        ).rounded(.down)
        return PixelRect(x: x, y: y, width: Double(width), height: Double(height))
    }
}
