/// The constants of the perceptual JPEG encoder, gathered so that the benchmark that fitted them
/// can sweep them (`@_spi(Tuning)`); the library always encodes with ``standard``.
@_spi(Tuning) public struct PerceptualJPEGTuning: Sendable, Hashable {
    /// Luma quantization step at DC for quality 50 (libjpeg's Annex K table has 16).
    public var lumaDC: Float
    /// How fast the luma step grows with radial frequency r = √(u² + v²): DC · (1 + slope · r^power).
    public var lumaSlope: Float
    public var lumaPower: Float
    /// The same for both chroma components.
    public var chromaDC: Float
    public var chromaSlope: Float
    public var chromaPower: Float
    /// Block activity (mean |Laplacian| of luma, 8-bit units) mapped through log2(1 + a) onto the
    /// masking strength: `activityLow` and below is 0 (flat), `activityHigh` and above is 1.
    public var activityLow: Float
    public var activityHigh: Float
    /// Weight of the 3×3 minimum in a block's strength: a busy block beside a flat one is treated
    /// as partly flat, because its ringing shows in the flat neighbour.
    public var erosion: Float
    /// AC dead zone (in quantization steps) of a flat block: |c/q| below it is zeroed; 0.5 is
    /// plain rounding.
    public var flatDeadZone: Float
    /// Extra dead zone at full masking strength, at the lowest and the highest AC frequencies.
    public var maskedDeadZoneLow: Float
    public var maskedDeadZoneHigh: Float
    /// Extra dead zone of chroma AC at full (luma-derived) masking strength.
    public var chromaMaskedDeadZone: Float

    /// Every constant; see each property.
    public init(
        lumaDC: Float, lumaSlope: Float, lumaPower: Float, chromaDC: Float, chromaSlope: Float, chromaPower: Float,
        activityLow: Float, activityHigh: Float, erosion: Float, flatDeadZone: Float, maskedDeadZoneLow: Float,
        maskedDeadZoneHigh: Float, chromaMaskedDeadZone: Float
    ) {
        self.lumaDC = lumaDC
        self.lumaSlope = lumaSlope
        self.lumaPower = lumaPower
        self.chromaDC = chromaDC
        self.chromaSlope = chromaSlope
        self.chromaPower = chromaPower
        self.activityLow = activityLow
        self.activityHigh = activityHigh
        self.erosion = erosion
        self.flatDeadZone = flatDeadZone
        self.maskedDeadZoneLow = maskedDeadZoneLow
        self.maskedDeadZoneHigh = maskedDeadZoneHigh
        self.chromaMaskedDeadZone = chromaMaskedDeadZone
    }

    /// The constants the engine encodes with.
    public static let standard = PerceptualJPEGTuning(
        lumaDC: 12, lumaSlope: 0.5, lumaPower: 1, chromaDC: 13, chromaSlope: 0.4, chromaPower: 1,
        activityLow: 0.5, activityHigh: 3, erosion: 0.5, flatDeadZone: 0.5, maskedDeadZoneLow: 0.1,
        maskedDeadZoneHigh: 0.3, chromaMaskedDeadZone: 0.1)
}
