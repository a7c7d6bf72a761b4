/// What size to make an image: one value that the decoder, the thumbnailer, the pipeline and
/// the CLI all take, and that every cache keys on.
///
/// Sizes refer to the upright image (after EXIF orientation). A decode that crops never
/// decodes what the crop throws away: JPEG rows above and below the crop are skipped and
/// columns cut to the iMCU-aligned span that covers it, before any IDCT or colour conversion.
///
/// ```swift
/// .fit(width: 1080, height: 1080)                 // longest side 1080 (same as maxPixelSize: 1080)
/// .fit(width: 400, height: 0)                     // 400 wide, any height
/// .fill(width: 400, height: 400)                  // a 400×400 grid cell, cropped around the centre
/// .fill(width: 400, height: 400, gravity: .north) // ... keeping the top
/// .fillDown(width: 1200, height: 900)             // 4:3, and never enlarged
/// .force(width: 64, height: 64)                   // exactly 64×64, aspect not kept
/// ```
///
/// Rounding: a side the box fixes is exactly the box's; the other side is the source's scaled
/// side rounded to the nearest pixel, at least 1. A crop is in fractional source pixels (filling
/// a 4000×3000 photo into 400×400 samples exactly the central 3000×3000, and an odd margin
/// splits into two half pixels), except when nothing is scaled (a small source under `fill` or
/// `fillDown` without `enlarge`): then the crop starts on a whole pixel, rounded down, and the
/// pixels are copied as they are.
public struct Resize: Sendable, Hashable, CustomStringConvertible {
    /// How the image is fitted to the box.
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        /// The largest size that fits inside the box, aspect kept. A zero side means "any".
        case fit
        /// Exactly the box (with a source that covers it, or with `enlarge`): scaled to cover the
        /// box and cropped by the gravity. Without `enlarge`, a source smaller than the box is not
        /// scaled and only what exceeds the box is cropped: min(w, W) × min(h, H).
        case fill
        /// Like `fill`, but a source smaller than the box is only cropped to the box's aspect
        /// ratio (the largest such crop), never enlarged: `enlarge` has no effect on it (as
        /// imgproxy's `fill-down`).
        case fillDown = "fill-down"
        /// Exactly the box, aspect not kept.
        case force
    }

    /// How the image is fitted to the box.
    public let mode: Mode
    /// Width of the box in pixels; 0 means "any" (fit only; a fit with neither side and a
    /// minimum size only enlarges to the minimum).
    public let width: Int
    /// Height of the box in pixels; 0 means "any" (fit only).
    public let height: Int
    /// What a fill keeps when it crops; always `.centre` for the modes that never crop.
    public let gravity: Gravity
    /// Whether fit and fill may scale a small source up; always false for `force` (which is
    /// exact anyway) and for `fillDown` (which never enlarges, whatever is asked).
    public let enlarge: Bool
    /// The least width the source is scaled to (imgproxy's `min-width`), enlarging if need be;
    /// the result is then cropped to the box by the gravity, so with a box it zooms in. 0: none;
    /// always 0 for `force`, which makes exactly the box.
    public let minimumWidth: Int
    /// The least height the source is scaled to (imgproxy's `min-height`); see `minimumWidth`.
    public let minimumHeight: Int
    /// How far the crop moves from where `gravity` puts it, in output pixels (or fractions of
    /// the image's sides); always zero when nothing is cropped by a gravity.
    public let offset: GravityOffset

    /// A resize in `mode`. Values that make no difference are normalised, so that two resizes
    /// that make the same image are equal (and share cache entries): gravity is `.centre` for
    /// `fit` and `force` (unless a minimum size makes a fit crop), `enlarge` is false for
    /// `force` and `fillDown`, and the minimum sizes are 0 for `force`.
    public init(
        mode: Mode, width: Int, height: Int, gravity: Gravity = .centre, enlarge: Bool = false, minimumWidth: Int = 0,
        minimumHeight: Int = 0, offset: GravityOffset = .zero
    ) {
        let minimums = mode == .force ? (0, 0) : (minimumWidth, minimumHeight)
        let crops = mode == .fill || mode == .fillDown || minimums != (0, 0)
        self.mode = mode
        self.width = width
        self.height = height
        self.gravity = crops ? gravity : .centre
        self.enlarge = mode == .force || mode == .fillDown ? false : enlarge
        (self.minimumWidth, self.minimumHeight) = minimums
        // A focus point or a smart crop place by a point, not by an edge: no offset.
        let placesByEdge: Bool
        switch gravity {
        case .focus, .smart: placesByEdge = false
        default: placesByEdge = true
        }
        self.offset = crops && placesByEdge ? offset : .zero
    }

    /// The same resize with another gravity (a smart crop's focus once found).
    public func with(gravity: Gravity) -> Resize {
        Resize(
            mode: mode, width: width, height: height, gravity: gravity, enlarge: enlarge, minimumWidth: minimumWidth,
            minimumHeight: minimumHeight, offset: offset)
    }

    /// The largest size inside `width × height`, aspect kept; a zero side means "any".
    public static func fit(width: Int, height: Int, enlarge: Bool = false) -> Resize {
        Resize(mode: .fit, width: width, height: height, enlarge: enlarge)
    }

    /// Exactly `width × height`, scaled to cover it and cropped by `gravity`.
    public static func fill(width: Int, height: Int, gravity: Gravity = .centre, enlarge: Bool = false) -> Resize {
        Resize(mode: .fill, width: width, height: height, gravity: gravity, enlarge: enlarge)
    }

    /// Like `fill`, but a small source is only cropped to the box's aspect ratio, never enlarged.
    public static func fillDown(width: Int, height: Int, gravity: Gravity = .centre) -> Resize {
        Resize(mode: .fillDown, width: width, height: height, gravity: gravity)
    }

    /// Exactly `width × height`, aspect not kept.
    public static func force(width: Int, height: Int) -> Resize {
        Resize(mode: .force, width: width, height: height)
    }

    /// The longest side at most `size`: `fit` in `size × size`, never enlarged (what
    /// `maxPixelSize` has always meant).
    public static func maxPixelSize(_ size: Int) -> Resize {
        .fit(width: size, height: size)
    }

    /// The longest side, when this resize is the `maxPixelSize` shorthand; nil otherwise.
    public var maxPixelSize: Int? {
        mode == .fit && width == height && !enlarge && minimumWidth == 0 && minimumHeight == 0 ? width : nil
    }

    /// A canonical text form, e.g. `fit:1080x1080`, `fill:400x400:north`,
    /// `fill:400x300:focus:0.3,0.6:enlarge`: equal resizes have equal descriptions, which makes
    /// it usable in cache keys.
    public var description: String {
        var text = "\(mode.rawValue):\(width)x\(height)"
        if mode == .fill || mode == .fillDown || gravity != .centre { text += ":\(gravity)" }
        if enlarge { text += ":enlarge" }
        if minimumWidth > 0 || minimumHeight > 0 { text += ":min:\(minimumWidth)x\(minimumHeight)" }
        if offset != .zero { text += ":offset:\(offset)" }
        return text
    }

    /// Throws `invalidArgument` unless the box makes sense for the mode: sides not negative, at
    /// most `maxDimension`; a zero side only for `fit`, and never both; a focus point in 0…1.
    public func validate(maxDimension: Int = DecodingLimits().maxDimension) throws(ImageCodecError) {
        guard width >= 0, height >= 0 else { throw .invalidArgument("resize sides must not be negative, got \(width)×\(height)") }
        guard width <= maxDimension, height <= maxDimension else {
            throw .invalidArgument("resize side above the limit of \(maxDimension) pixels: \(width)×\(height)")
        }
        try offset.validate(maxDimension: maxDimension)
        guard (0...maxDimension).contains(minimumWidth), (0...maxDimension).contains(minimumHeight) else {
            throw .invalidArgument("minimum sides must be 0-\(maxDimension), got \(minimumWidth)×\(minimumHeight)")
        }
        if mode == .fit {
            guard width > 0 || height > 0 || minimumWidth > 0 || minimumHeight > 0 else {
                throw .invalidArgument("fit needs at least one side above 0, got \(width)×\(height)")
            }
        } else {
            guard width > 0, height > 0 else { throw .invalidArgument("\(mode.rawValue) needs both sides above 0, got \(width)×\(height)") }
        }
        if case .focus(let x, let y) = gravity, Gravity.focusPoint(x: x, y: y) == nil {
            throw .invalidArgument("focus point must be in 0…1, got \(x), \(y)")
        }
    }
}
