import CImageCodecShim

/// A matrix/TRC RGB profile's conversion to sRGB as integer tables and a fixed-point 3×3
/// matrix, for converting a resampled bitmap in place.
///
/// Why not Little CMS' own transform: its 8-bit path widens every pixel to 16 bits and calls
/// an evaluator through function pointers, about 10 ns a pixel here, which on the 12 MP Display
/// P3 sample's 1080 px thumbnail is 15% of the thumbnail's time; this loop is a few lookups and
/// nine integer multiplies. Little CMS still provides every number (the profile's curves and
/// colorants, sRGB's), and the tables are checked against its transform on a grid of probe
/// colours before they are used: a profile where they differ by more than a level anywhere
/// keeps Little CMS' transform.
///
/// A class holding raw tables, immutable after `init` (hence `@unchecked Sendable`).
final class MatrixShaper: @unchecked Sendable {
    /// Fixed-point one: 14 fractional bits, enough for the output table's 0.2-level steps;
    /// entries are stored in 32 bits and multiplied in 64.
    private static let one: Int32 = 1 << 14
    /// 8-bit source value → linear light in 1.14; red, then green, then blue (3 × 256).
    private let linear: UnsafeMutablePointer<Int32>
    /// Source linear RGB → linear sRGB, row-major, 1.14 (both relative to D50, as in ICC).
    private let matrix: UnsafeMutablePointer<Int32>
    /// Linear sRGB in 1.14 (0...`one`) → encoded sRGB. 16385 steps keep the steepest part of
    /// the sRGB curve (12.92 in the shadows) at 0.2 levels a step.
    private let encode: UnsafeMutablePointer<UInt8>

    /// The tags Little CMS builds an RGB input transform from instead of the matrix: the float
    /// D2B0/D2B1 first, then the A2B tag of the intent, then A2B0 for any intent. Asking for the
    /// relative intent's table alone (A2B1) misses a profile with only A2B0, which Little CMS
    /// then uses: with any of them present, the matrix is not the profile's model.
    static let lookupTableTags: [cmsTagSignature] = [cmsSigDToB0Tag, cmsSigDToB1Tag, cmsSigAToB0Tag, cmsSigAToB1Tag]

    /// Whether `profile` has any of `lookupTableTags`.
    static func hasLookupTable(_ profile: cmsHPROFILE) -> Bool {
        lookupTableTags.contains { cmsIsTag(profile, $0) != 0 }
    }

    /// `hasLookupTable` for profile bytes; nil when Little CMS cannot open them.
    static func hasLookupTable(iccProfile: [UInt8]) -> Bool? {
        var message = ShimMessage.buffer()
        guard let profile = iec_cms_open_profile(iccProfile, iccProfile.count, &message) else { return nil }
        defer { cmsCloseProfile(profile) }
        return hasLookupTable(profile)
    }

    /// The tables for `profile`, or nil when it is not a matrix/TRC RGB profile, when it also
    /// has a lookup table for this intent (which Little CMS then uses instead of the matrix, so
    /// the two would be different models of the profile), or when they would differ from
    /// `transform` (the same conversion in Little CMS) by more than a level.
    init?(profile source: cmsHPROFILE, checkedAgainst transform: cmsHTRANSFORM) {
        guard cmsIsMatrixShaper(source) != 0, !Self.hasLookupTable(source), let srgb = iec_cms_create_srgb_profile()
        else { return nil }
        defer { cmsCloseProfile(srgb) }
        guard let sourceMatrix = Self.colorants(source), let srgbMatrix = Self.colorants(srgb),
            let inverse = Self.inverted(srgbMatrix),
            let curves = Self.curves(source), let srgbCurves = Self.curves(srgb),
            let reverse = cmsReverseToneCurve(srgbCurves.0)
        else { return nil }
        defer { cmsFreeToneCurve(reverse) }
        // Every number comes from the file, so each is checked before it becomes an integer:
        // a colorant of 1e30 or a curve that returns NaN means Little CMS' transform, not a trap.
        let one = Float(Self.one)
        let product = Self.multiplied(inverse, sourceMatrix).joined().map { Self.fixed($0, limit: Self.matrixLimit) }
        var linearValues: [Int32?] = []
        for curve in [curves.0, curves.1, curves.2] {
            linearValues += (0..<256).map { Self.fixed(cmsEvalToneCurveFloat(curve, Float($0) / 255), limit: 1) }
        }
        let encodeValues = (0...Int(Self.one)).map { step -> UInt8? in
            let value = 255 * cmsEvalToneCurveFloat(reverse, Float(step) / one)
            return value.isFinite ? UInt8(Swift.min(Swift.max(value.rounded(), 0), 255)) : nil
        }
        guard !product.contains(nil), !linearValues.contains(nil), !encodeValues.contains(nil) else { return nil }
        matrix = .allocate(capacity: 9) // small: 3 × 3
        matrix.initialize(from: product.map { $0! }, count: 9)
        linear = .allocate(capacity: linearValues.count) // small: 3 × 256 values
        linear.initialize(from: linearValues.map { $0! }, count: linearValues.count)
        encode = .allocate(capacity: encodeValues.count) // small: one table of the fixed-point range
        encode.initialize(from: encodeValues.map { $0! }, count: encodeValues.count)
        guard matches(transform) else { return nil }
    }

    /// Largest matrix entry accepted. Real conversions between RGB spaces stay within about ±3
    /// (ProPhoto to sRGB: 2.03); anything far beyond is a broken profile, left to Little CMS.
    private static let matrixLimit: Float = 16

    /// `value` in 1.14 fixed point, or nil when it is not finite or beyond ±`limit` (curves:
    /// 0...1 up to rounding).
    private static func fixed(_ value: Float, limit: Float) -> Int32? {
        guard value.isFinite, abs(value) <= limit * 1.001 else { return nil }
        return Int32((value * Float(one)).rounded())
    }

    deinit {
        linear.deallocate()
        matrix.deallocate()
        encode.deallocate()
    }

    /// Converts `count` pixels of `channels` bytes (3: RGB; 4: RGBA, alpha left alone) in place.
    func convert(_ pixels: UnsafeMutablePointer<UInt8>, count: Int, channels: Int) {
        let (linear, m, encode, one) = (linear, matrix, encode, Int(Self.one))
        var pixel = pixels
        for _ in 0..<count {
            let r = Int(linear[Int(pixel[0])]), g = Int(linear[256 + Int(pixel[1])]), b = Int(linear[512 + Int(pixel[2])])
            // 64-bit sums: no entry or product can overflow them. Out-of-gamut colours come out
            // below 0 or above one: clipped, as Little CMS does.
            @inline(__always) func encoded(_ row: Int) -> UInt8 {
                let light = (Int(m[row]) &* r &+ Int(m[row + 1]) &* g &+ Int(m[row + 2]) &* b &+ (one >> 1)) >> 14
                return encode[Swift.min(Swift.max(light, 0), one)]
            }
            (pixel[0], pixel[1], pixel[2]) = (encoded(0), encoded(3), encoded(6))
            pixel += channels
        }
    }

    /// True when no probe colour differs from Little CMS' result by more than one level: a grid
    /// of 8000 colours, and every level of the shadows (1-35), where the sRGB curve is
    /// steepest and a table's rounding shows first, on each channel alone and on the gray axis.
    private func matches(_ transform: cmsHTRANSFORM) -> Bool {
        let steps: [UInt8] = [0, 1, 2, 4, 9, 18, 36, 55, 73, 91, 109, 128, 146, 164, 182, 200, 219, 237, 254, 255]
        var probe = steps.flatMap { r in steps.flatMap { g in steps.flatMap { b in [r, g, b] } } }
        for level in UInt8(1)...35 {
            probe += [level, 0, 0, 0, level, 0, 0, 0, level, level, level, level, level, 255, 255, 255, level, 255, 255, 255, level]
        }
        var reference = [UInt8](repeating: 0, count: probe.count) // small: the fixed probe
        let count = probe.count / 3
        probe.withUnsafeBufferPointer { input in
            reference.withUnsafeMutableBufferPointer { cmsDoTransform(transform, input.baseAddress!, $0.baseAddress!, UInt32(count)) }
        }
        probe.withUnsafeMutableBufferPointer { convert($0.baseAddress!, count: count, channels: 3) }
        return zip(probe, reference).allSatisfy { abs(Int($0) - Int($1)) <= 1 }
    }

    // MARK: - Reading the profile through Little CMS

    /// The colorant matrix (rows X, Y, Z; columns red, green, blue).
    private static func colorants(_ profile: cmsHPROFILE) -> [[Float]]? {
        let tags = [cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag]
        var columns: [cmsCIEXYZ] = []
        for tag in tags {
            guard let pointer = cmsReadTag(profile, tag) else { return nil }
            columns.append(pointer.assumingMemoryBound(to: cmsCIEXYZ.self).pointee)
        }
        return [columns.map { Float($0.X) }, columns.map { Float($0.Y) }, columns.map { Float($0.Z) }]
    }

    private static func curves(_ profile: cmsHPROFILE) -> (OpaquePointer, OpaquePointer, OpaquePointer)? {
        guard let red = cmsReadTag(profile, cmsSigRedTRCTag), let green = cmsReadTag(profile, cmsSigGreenTRCTag),
            let blue = cmsReadTag(profile, cmsSigBlueTRCTag)
        else { return nil }
        return (OpaquePointer(red), OpaquePointer(green), OpaquePointer(blue))
    }

    private static func multiplied(_ a: [[Float]], _ b: [[Float]]) -> [[Float]] {
        (0..<3).map { row in (0..<3).map { column in (0..<3).reduce(0) { $0 + a[row][$1] * b[$1][column] } } }
    }

    private static func inverted(_ m: [[Float]]) -> [[Float]]? {
        let a = m.map { $0.map(Double.init) }
        let cofactors = (0..<3).map { row in
            (0..<3).map { column -> Double in
                let rows = (0..<3).filter { $0 != row }, columns = (0..<3).filter { $0 != column }
                let minor = a[rows[0]][columns[0]] * a[rows[1]][columns[1]] - a[rows[0]][columns[1]] * a[rows[1]][columns[0]]
                return (row + column).isMultiple(of: 2) ? minor : -minor
            }
        }
        let determinant = (0..<3).reduce(0.0) { $0 + a[0][$1] * cofactors[0][$1] }
        guard abs(determinant) > 1e-9 else { return nil }
        // The inverse is the transposed cofactor matrix over the determinant.
        return (0..<3).map { row in (0..<3).map { column in Float(cofactors[column][row] / determinant) } }
    }
}
