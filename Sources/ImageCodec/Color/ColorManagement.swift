/// What decoding does with a source's ICC profile.
public enum ColorManagement: Sendable, Hashable {
    /// Convert to sRGB (the default). A source tagged with any other RGB profile (Display P3,
    /// Adobe RGB, ProPhoto, matrix or LUT), a gray profile, or a CMYK JPEG with a profile is
    /// converted with Little CMS, relative colorimetric with black point compensation, never on
    /// the full-size image when a smaller one is asked for: RGB and gray on the resampled
    /// bitmap, CMYK on the DCT-scaled rows ahead of the resampler. sRGB-tagged and untagged
    /// sources are not touched. The bitmap carries no profile: its values are sRGB (gray: the
    /// sRGB curve), which is also what browsers assume for an untagged image, so outputs need
    /// none.
    case convertToSRGB
    /// Keep the source's values and its profile in ``Bitmap/iccProfile``, for clients that
    /// manage colour themselves. CMYK JPEGs still become RGB (through their profile when they
    /// have one), since a bitmap has no CMYK layout.
    case preserveSource
}

/// What colour management has done in this process, for monitoring and tests.
public struct ColorManagementStatistics: Sendable, Hashable {
    /// Transforms built (each distinct profile and pixel layout costs one).
    public var transformsBuilt: Int
    /// Decodes that reused a cached transform or a cached verdict.
    public var cacheHits: Int
    /// Decodes whose profile was sRGB in effect, which cost nothing per pixel.
    public var sRGBProfiles: Int
    /// Decodes whose profile Little CMS rejected or that did not fit the image (a CMYK profile
    /// on an RGB JPEG, say): the image was then decoded as untagged, never failed.
    public var ignoredProfiles: Int

    /// Statistics with the given counts, e.g. for a test double.
    public init(transformsBuilt: Int = 0, cacheHits: Int = 0, sRGBProfiles: Int = 0, ignoredProfiles: Int = 0) {
        self.transformsBuilt = transformsBuilt
        self.cacheHits = cacheHits
        self.sRGBProfiles = sRGBProfiles
        self.ignoredProfiles = ignoredProfiles
    }
}
