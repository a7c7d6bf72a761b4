/// What goes around an image after its resize: an extension to a box or an aspect ratio,
/// padding, and the colour that fills them — a product photo of any shape centred on an even,
/// white square tile. imgproxy's `extend`, `extend_aspect_ratio`, `padding` and `background`.
///
/// ```swift
/// // A 400×400 white tile around a photo fitted inside 360×360, 20 px of margin on each side.
/// let tile = Canvas(extend: .size(width: 360, height: 360), padding: .all(20), background: .white)
/// let fitted = try ImageDecoder(options: DecodingOptions(resize: .fit(width: 360, height: 360))).decode(data)
/// let square = try tile.apply(to: fitted)   // 400 × 400
/// ```
///
/// Without a ``background`` the added area is transparent: the bitmap gains an alpha channel,
/// which PNG, WebP and AVIF keep and JPEG composites over its own background (white by
/// default). With one, the added area is that colour and an image with alpha is composited
/// over it too, so the output is opaque.
public struct Canvas: Sendable, Hashable {
    /// Sizes on each side, in pixels.
    public struct Insets: Sendable, Hashable {
        /// Above the image.
        public var top: Int
        /// Right of the image.
        public var right: Int
        /// Below the image.
        public var bottom: Int
        /// Left of the image.
        public var left: Int

        /// Each side; negative values count as 0.
        public init(top: Int, right: Int, bottom: Int, left: Int) {
            self.top = max(0, top)
            self.right = max(0, right)
            self.bottom = max(0, bottom)
            self.left = max(0, left)
        }

        /// The same on every side.
        public static func all(_ side: Int) -> Insets { Insets(top: side, right: side, bottom: side, left: side) }

        /// Sides in CSS order (top, right, bottom, left; nil or past the end: not given): the
        /// top stands for every side not given and the right for the left, as in CSS and
        /// imgproxy's `padding`; a top not given is 0.
        public init(cssOrder sides: [Int?]) {
            func side(_ index: Int) -> Int? { index < sides.count ? sides[index] : nil }
            let top = side(0) ?? 0
            let right = side(1) ?? top
            self.init(top: top, right: right, bottom: side(2) ?? top, left: side(3) ?? right)
        }

        /// No inset.
        public static let zero = Insets(top: 0, right: 0, bottom: 0, left: 0)
    }

    /// How far the canvas grows before padding.
    public enum Extension: Sendable, Hashable {
        /// At least `width` × `height` (a side of 0 is not extended): an image smaller than the
        /// box, such as a fit of another aspect ratio, sits on the box at ``Canvas/gravity``.
        case size(width: Int, height: Int)
        /// The smallest canvas of aspect ratio `width` : `height` that holds the image.
        case aspectRatio(width: Int, height: Int)
    }

    /// The extension, if any.
    public var extend: Extension?
    /// Where the image sits on an extended canvas (a focus point places its centre there, as
    /// far as the canvas allows).
    public var gravity: Gravity
    /// How far the image moves from where `gravity` puts it, in pixels (or fractions of the
    /// canvas's sides), staying on the canvas.
    public var offset = GravityOffset.zero
    /// Added around the (extended) canvas.
    public var padding: Insets
    /// What fills the added area; nil: transparent.
    public var background: RGBColor?

    /// The longest side a canvas may have, as the decoder's `DecodingLimits.maxDimension`
    /// bounds a source: no arithmetic below meets a larger number.
    public static let maximumSide = 65_535

    /// A canvas; with the defaults, the image unchanged.
    public init(extend: Extension? = nil, gravity: Gravity = .centre, padding: Insets = .zero, background: RGBColor? = nil) {
        self.extend = extend
        self.gravity = gravity
        self.padding = padding
        self.background = background
    }

    /// True when ``apply(to:limits:)`` returns the bitmap as it is.
    public var isIdentity: Bool { extend == nil && padding == .zero && background == nil }

    /// The canvas around an image of `width` × `height`, before any pixel is touched; throws
    /// `dimensionTooLarge` past ``maximumSide`` or `limits.maxDimension`, and `tooLarge` past
    /// `limits.maxPixelCount`, so a URL cannot ask for a giant canvas.
    public func size(width: Int, height: Int, limits: DecodingLimits = DecodingLimits()) throws(ImageCodecError) -> (width: Int, height: Int) {
        let side = min(Self.maximumSide, limits.maxDimension)
        func checked(_ value: Int) -> Int { min(max(value, 0), side + 1) }
        var (outWidth, outHeight) = (checked(width), checked(height))
        switch extend {
        case .size(let boxWidth, let boxHeight):
            outWidth = max(outWidth, checked(boxWidth))
            outHeight = max(outHeight, checked(boxHeight))
        case .aspectRatio(let ratioWidth, let ratioHeight) where ratioWidth > 0 && ratioHeight > 0:
            // Grow one side so that outWidth / outHeight = ratioWidth / ratioHeight, rounded to
            // the nearest pixel; in Double, exact for these magnitudes.
            let ratio = Double(checked(ratioWidth)) / Double(checked(ratioHeight))
            if Double(outWidth) / Double(max(outHeight, 1)) < ratio {
                outWidth = checked(max(outWidth, Int((Double(outHeight) * ratio).rounded())))
            } else {
                outHeight = checked(max(outHeight, Int((Double(outWidth) / ratio).rounded())))
            }
        case .aspectRatio, nil:
            break
        }
        outWidth += checked(padding.left) + checked(padding.right)
        outHeight += checked(padding.top) + checked(padding.bottom)
        guard outWidth <= side, outHeight <= side else { throw .dimensionTooLarge(width: outWidth, height: outHeight, limit: side) }
        guard outWidth * outHeight <= limits.maxPixelCount else {
            throw .tooLarge(width: outWidth, height: outHeight, limit: limits.maxPixelCount)
        }
        return (outWidth, outHeight)
    }

    /// Bytes ``apply(to:limits:)`` allocates for an image of `width` × `height`: its canvas,
    /// 4 bytes a pixel at most (for planning a render's memory before it starts).
    public func plannedBytes(width: Int, height: Int, limits: DecodingLimits = DecodingLimits()) throws(ImageCodecError) -> Int {
        guard !isIdentity else { return 0 }
        let size = try self.size(width: width, height: height, limits: limits)
        return size.width * size.height * 4
    }

    /// The bitmap on its canvas. Gray becomes RGB when the background is a colour; an ICC
    /// profile stays (the background is taken in the image's colour space).
    public func apply(to bitmap: Bitmap, limits: DecodingLimits = DecodingLimits()) throws(ImageCodecError) -> Bitmap {
        guard !isIdentity else { return bitmap }
        let (width, height) = try size(width: bitmap.width, height: bitmap.height, limits: limits)
        let free = (width - padding.left - padding.right - bitmap.width, height - padding.top - padding.bottom - bitmap.height)
        func place(_ length: Int, _ total: Int, _ axis: Gravity.Axis) -> Int {
            let shift = offset.shift(total: Double(total), axis: axis, pixelScale: 1)
            return Int(gravity.offset(length: Double(length), total: Double(total), axis: axis, shift: shift).rounded())
        }
        let x = padding.left + place(bitmap.width, bitmap.width + free.0, .horizontal)
        let y = padding.top + place(bitmap.height, bitmap.height + free.1, .vertical)
        let grown = width != bitmap.width || height != bitmap.height
        // The output format: opaque over a background, with alpha when the added area is
        // transparent, gray only when every pixel is gray.
        let image: Bitmap
        let format: PixelFormat
        let fill: [UInt8]
        if let background {
            let gray = background.red == background.green && background.green == background.blue
            let flat = try bitmap.flattened(over: background)
            image = gray ? flat : try flat.expandingGray()
            format = image.format
            fill = format.isGray ? [background.red] : [background.red, background.green, background.blue]
        } else {
            image = grown ? try bitmap.withAlphaChannel() : bitmap
            format = image.format
            fill = [UInt8](repeating: 0, count: format.channels) // small: one pixel
        }
        guard grown else { return image }
        let channels = format.channels
        return try Bitmap.make(width: width, height: height, format: format, iccProfile: bitmap.iccProfile) { (output) throws(ImageCodecError) in
            var checkpoint = CancellationCheckpoint()
            for row in 0..<height {
                try checkpoint.advance(by: width)
                for pixel in row * width..<(row + 1) * width {
                    for channel in 0..<channels { output[pixel * channels + channel] = fill[channel] }
                }
            }
            image.pixels.withUnsafeBufferPointer { input in
                let rowBytes = image.width * channels
                for row in 0..<image.height {
                    let target = output.baseAddress! + ((y + row) * width + x) * channels
                    target.update(from: input.baseAddress! + row * rowBytes, count: rowBytes)
                }
            }
        }
    }
}
