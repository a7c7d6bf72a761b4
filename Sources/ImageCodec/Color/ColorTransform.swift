import CImageCodecShim

/// A Little CMS transform from a source profile to sRGB for one pixel layout.
///
/// `@unchecked Sendable`: the transform is made without Little CMS' 1-pixel cache, which is
/// its only mutable state, so `cmsDoTransform` may run on it from several threads at once.
final class ColorTransform: @unchecked Sendable {
    private let handle: cmsHTRANSFORM
    let layout: ColorLayout
    /// For a matrix/TRC profile on RGB rows: the same conversion as integer tables, faster.
    private let matrixShaper: MatrixShaper?

    /// What building a transform for a profile came to.
    enum Outcome {
        case transform(ColorTransform)
        /// The profile is sRGB in effect: converting would change no value by more than one level.
        case sRGB
        /// Little CMS rejected the profile or could not build the transform.
        case rejected(String)
    }

    private init(handle: cmsHTRANSFORM, layout: ColorLayout, matrixShaper: MatrixShaper?) {
        self.handle = handle
        self.layout = layout
        self.matrixShaper = matrixShaper
    }

    deinit { cmsDeleteTransform(handle) }

    /// Builds the transform from `profile` to sRGB (gray: the sRGB curve) for rows in `layout`.
    static func toSRGB(profile: [UInt8], layout: ColorLayout) -> Outcome {
        var message = ShimMessage.buffer()
        guard let source = iec_cms_open_profile(profile, profile.count, &message) else {
            return .rejected(message.shimMessage)
        }
        defer { cmsCloseProfile(source) }
        let isGray = layout.output == .gray || layout.output == .grayAlpha
        guard let target = isGray ? iec_cms_create_srgb_gray_profile() : iec_cms_create_srgb_profile() else {
            return .rejected("Little CMS could not build the sRGB profile")
        }
        defer { cmsCloseProfile(target) }
        // Relative colorimetric: in-gamut colours stay exactly as measured (white mapped to
        // white), out-of-gamut ones are clipped, which is what browsers and libvips do; matrix
        // profiles (P3, Adobe RGB) have no perceptual tables anyway. Black point compensation
        // keeps a print profile's shadows from washing out grey; for RGB it changes nothing.
        guard
            let handle = iec_cms_create_transform(
                source, layout.shimLayout, target, layout.output.shimLayout,
                Int32(INTENT_RELATIVE_COLORIMETRIC), 1, &message)
        else {
            return .rejected(message.shimMessage)
        }
        // Identity first: an sRGB-tagged photo (the common case) then builds no integer tables.
        if isIdentity(handle, layout: layout) {
            cmsDeleteTransform(handle)
            return .sRGB
        }
        let shaper = layout == .rgb ? MatrixShaper(profile: source, checkedAgainst: handle) : nil
        return .transform(ColorTransform(handle: handle, layout: layout, matrixShaper: shaper))
    }

    /// Converts `count` pixels from `input` (in `layout`) to `output` (in `layout.output`).
    func apply(_ input: UnsafePointer<UInt8>, _ output: UnsafeMutablePointer<UInt8>, count: Int) {
        cmsDoTransform(handle, input, output, UInt32(count))
    }

    /// Converts `count` pixels in place, which needs `layout.output == layout`.
    func applyInPlace(_ pixels: UnsafeMutablePointer<UInt8>, count: Int) {
        precondition(layout.output == layout, "in place only when the layout is kept")
        if let matrixShaper {
            matrixShaper.convert(pixels, count: count, channels: layout.channels)
        } else {
            // Little CMS may transform in place when input and output pixels have the same
            // size (mm2/Little-CMS#93).
            cmsDoTransform(handle, pixels, pixels, UInt32(count))
        }
    }

    /// Whether in-place conversion takes the integer tables (for tests and statistics).
    var usesMatrixShaper: Bool { matrixShaper != nil }

    /// True when no value moves by more than one level on a grid of probe colours (every gray
    /// level; 8 steps per channel for colour): such a profile is sRGB, e.g. the HP profile
    /// most cameras embed, and decoding it untouched keeps it bit-identical to untagged.
    private static func isIdentity(_ handle: cmsHTRANSFORM, layout: ColorLayout) -> Bool {
        let probe: [UInt8]
        switch layout {
        case .cmyk: return false
        case .gray: probe = (0...255).map(UInt8.init)
        case .grayAlpha: probe = (0...255).flatMap { [UInt8($0), 255] }
        case .rgb, .rgba:
            let steps: [UInt8] = [0, 36, 73, 109, 146, 182, 219, 255]
            probe = steps.flatMap { r in steps.flatMap { g in steps.flatMap { b in layout == .rgba ? [r, g, b, 255] : [r, g, b] } } }
        }
        let count = probe.count / layout.channels
        var converted = [UInt8](repeating: 0, count: probe.count) // small: the fixed probe
        probe.withUnsafeBufferPointer { input in
            converted.withUnsafeMutableBufferPointer { cmsDoTransform(handle, input.baseAddress!, $0.baseAddress!, UInt32(count)) }
        }
        return zip(probe, converted).allSatisfy { abs(Int($0) - Int($1)) <= 1 }
    }
}
