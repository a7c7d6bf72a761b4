/// What happens to a decoded bitmap before it is encoded, in imgproxy's order: a turn by a
/// multiple of 90°, the filters, the canvas. One description, so that a batch
/// (``ThumbnailOptions``) and a service plan the same memory and make the same pixels.
///
/// ```swift
/// let finishing = Finishing(rotation: 90, canvas: Canvas(extend: .size(width: 400, height: 400), background: .white))
/// let size = try finishing.outputSize(width: plan.width, height: plan.height)   // before decoding
/// let tile = try finishing.apply(to: decoded)
/// ```
public struct Finishing: Sendable, Hashable {
    /// Degrees clockwise: a multiple of 90, negative counter-clockwise; any other number is no
    /// turn, as ``ExifOrientation/init(clockwise:)`` reads it.
    public var rotation: Int
    /// Blur, sharpen or pixelate, on the turned image.
    public var filters: ImageFilters
    /// Extension, padding and background around the filtered image.
    public var canvas: Canvas

    /// The steps; by default none.
    public init(rotation: Int = 0, filters: ImageFilters = ImageFilters(), canvas: Canvas = Canvas()) {
        self.rotation = rotation
        self.filters = filters
        self.canvas = canvas
    }

    private var turn: ExifOrientation { ExifOrientation(clockwise: rotation) }

    /// The finished size of a decoded `width` × `height` bitmap, before any pixel is touched;
    /// throws as ``Canvas/size(width:height:limits:)`` does for a canvas past the limits.
    public func outputSize(width: Int, height: Int, limits: DecodingLimits = DecodingLimits()) throws(ImageCodecError) -> (width: Int, height: Int) {
        let (turnedWidth, turnedHeight) = turn.swapsDimensions ? (height, width) : (width, height)
        return try canvas.size(width: turnedWidth, height: turnedHeight, limits: limits)
    }

    /// Bytes the steps allocate beside the decoded bitmap: the turned copy, the filters'
    /// buffers and the canvas, at 4 bytes a pixel at most.
    public func plannedBytes(width: Int, height: Int, limits: DecodingLimits = DecodingLimits()) throws(ImageCodecError) -> Int {
        let (turnedWidth, turnedHeight) = turn.swapsDimensions ? (height, width) : (width, height)
        return (turn == .up ? 0 : width * height * 4) + filters.plannedBytes(width: turnedWidth, height: turnedHeight, channels: 4)
            + (try canvas.plannedBytes(width: turnedWidth, height: turnedHeight, limits: limits))
    }

    /// The finished bitmap: turned, filtered, on its canvas.
    public func apply(to bitmap: Bitmap, limits: DecodingLimits = DecodingLimits()) throws(ImageCodecError) -> Bitmap {
        try canvas.apply(to: filters.apply(to: bitmap.applying(turn)), limits: limits)
    }
}
