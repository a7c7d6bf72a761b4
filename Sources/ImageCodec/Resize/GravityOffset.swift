/// How far a placement moves from where its ``Gravity`` puts it (imgproxy's gravity offsets):
/// right and down are positive, and the result stays inside the image or canvas. A value whose
/// magnitude is below 1 is a fraction of the whole side (0.1: a tenth of the image's width);
/// 1 and more is pixels — of the output for a resize's crop and a canvas, of the image for a
/// ``CropRegion``.
///
/// imgproxy writes offsets inward from the edge the gravity names (`g:ea:10:0` is 10 pixels in
/// from the right); in this type that is `GravityOffset(x: -10, y: 0)` with ``Gravity/east``.
public struct GravityOffset: Sendable, Hashable, CustomStringConvertible {
    /// Rightward move.
    public var x: Double
    /// Downward move.
    public var y: Double

    /// A move of `x` right and `y` down.
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    /// No move.
    public static let zero = GravityOffset(x: 0, y: 0)

    /// `x,y`, for cache keys.
    public var description: String { "\(x),\(y)" }

    /// Throws `invalidArgument` unless both values are finite and at most `maxDimension` pixels.
    public func validate(maxDimension: Int = DecodingLimits().maxDimension) throws(ImageCodecError) {
        guard x.isFinite, y.isFinite, abs(x) <= Double(maxDimension), abs(y) <= Double(maxDimension) else {
            throw .invalidArgument("a gravity offset must be finite and at most \(maxDimension) pixels, got \(x), \(y)")
        }
    }

    /// The move along `axis` in a frame whose whole side is `total`, where one of the offset's
    /// pixels is `pixelScale` of the frame's.
    func shift(total: Double, axis: Gravity.Axis, pixelScale: Double) -> Double {
        let value = axis == .horizontal ? x : y
        return abs(value) < 1 ? value * total : value * pixelScale
    }
}
