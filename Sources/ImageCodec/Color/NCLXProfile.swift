import CImageCodecShim
import Locking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An ICC profile for the colour an HEIF file names with code points instead of a profile (its
/// `nclx` box: ITU-T H.273 colour primaries and transfer characteristics), so that such a file
/// goes through the same colour management as a tagged JPEG.
///
/// libheif has already undone the matrix coefficients: its RGB is non-linear, in the named
/// primaries, through the named transfer. The profile Little CMS builds from those (Bradford to
/// D50, as for any matrix/TRC profile) therefore converts it to sRGB exactly as a Display P3 or
/// Rec. 2020 ICC profile would.
///
/// Choices where H.273 leaves room:
/// - SDR video transfers (BT.709, BT.601, BT.2020's 10 and 12 bit) are decoded with the sRGB
///   curve, not their camera curve: still images with them are display-referred (encoders write
///   BT.709 for sRGB photos), and browsers show them so.
/// - PQ and HLG (HDR) are tone-mapped: BT.2408's reference white (203 cd/m²; HLG's 75% signal)
///   is linear 1, values up to 0.8 are kept, and those above are compressed smoothly towards 1
///   instead of clipped, so highlights keep some detail. Per channel, as a curve: the profile
///   stays a matrix/TRC profile.
/// - Unknown code points, and XYZ primaries, are not guessed at: the image is decoded as sRGB
///   with a warning.
enum NCLXProfile {
    /// The profile for `primaries` and `transfer`; `.sRGB` when the pixels already are sRGB in
    /// effect (BT.709 primaries with an SDR transfer), `.unsupported` with the reason otherwise.
    enum Verdict: Sendable, Hashable {
        case sRGB
        case profile([UInt8])
        case unsupported(String)
    }

    static func verdict(primaries: Int, transfer: Int) -> Verdict {
        // Unknown code points are answered without building or keeping anything: a stream of
        // files naming every pair must not grow the cache.
        guard let points = chromaticities(primaries) else { return .unsupported("nclx colour primaries \(primaries)") }
        guard let curve = curve(transfer) else { return .unsupported("nclx transfer characteristics \(transfer)") }
        if [0, 1, 2].contains(primaries), case .sRGB = curve { return .sRGB }
        let key = Key(primaries: primaries, transfer: transfer)
        // Built once per pair: Little CMS stamps each profile it saves with the time, and the
        // transform cache is keyed by the bytes.
        if let known = built.lock.withLock({ built.verdicts[key] }) { return known }
        let verdict = build(points, curve)
        built.lock.withLock { built.verdicts[key] = verdict }
        return verdict
    }

    private struct Key: Hashable {
        var primaries: Int
        var transfer: Int
    }

    /// One entry per pair of known code points: about a hundred at most.
    private final class Built: @unchecked Sendable {
        // @unchecked: `verdicts` is only touched while `lock` is held.
        let lock = Lock()
        var verdicts: [Key: Verdict] = [:]
    }

    private static let built = Built()

    /// White point and red, green, blue chromaticities (x, y) of H.273's primaries.
    private static func chromaticities(_ code: Int) -> [Double]? {
        let d65 = [0.3127, 0.3290]
        let illuminantC = [0.310, 0.316]
        switch code {
        case 0, 1, 2: return d65 + [0.64, 0.33, 0.30, 0.60, 0.15, 0.06] // BT.709, sRGB (0, 2: unspecified)
        case 4: return illuminantC + [0.67, 0.33, 0.21, 0.71, 0.14, 0.08] // BT.470 System M
        case 5: return d65 + [0.64, 0.33, 0.29, 0.60, 0.15, 0.06] // BT.470 System B, G; BT.601 625
        case 6, 7: return d65 + [0.630, 0.340, 0.310, 0.595, 0.155, 0.070] // BT.601 525, SMPTE 240M
        case 8: return illuminantC + [0.681, 0.319, 0.243, 0.692, 0.145, 0.049] // generic film
        case 9: return d65 + [0.708, 0.292, 0.170, 0.797, 0.131, 0.046] // BT.2020, BT.2100
        case 11: return [0.314, 0.351, 0.680, 0.320, 0.265, 0.690, 0.150, 0.060] // DCI-P3
        case 12: return d65 + [0.680, 0.320, 0.265, 0.690, 0.150, 0.060] // Display P3
        case 22: return d65 + [0.630, 0.340, 0.295, 0.605, 0.155, 0.077] // EBU Tech 3213
        default: return nil
        }
    }

    private enum Curve {
        case sRGB
        case gamma(Double)
        case table((Double) -> Double)
    }

    private static func curve(_ code: Int) -> Curve? {
        switch code {
        case 0, 1, 2, 6, 13, 14, 15: return .sRGB
        case 4: return .gamma(2.2)
        case 5: return .gamma(2.8)
        case 8: return .gamma(1)
        case 16: return .table { toneMapped(perceptualQuantizer($0) * 10_000 / 203) }
        case 18: return .table { toneMapped(hybridLogGamma($0)) }
        default: return nil
        }
    }

    /// SMPTE ST 2084's EOTF: signal → cd/m² / 10 000.
    private static func perceptualQuantizer(_ signal: Double) -> Double {
        let (m1, m2) = (2610.0 / 16384, 2523.0 / 4096 * 128)
        let (c1, c2, c3) = (3424.0 / 4096, 2413.0 / 4096 * 32, 2392.0 / 4096 * 32)
        let power = pow(max(signal, 0), 1 / m2)
        return pow(max(power - c1, 0) / (c2 - c3 * power), 1 / m1)
    }

    /// BT.2100's inverse HLG OETF, with the display's system gamma (1.2) per channel, scaled so
    /// that the 75% signal (reference white) is 1.
    private static func hybridLogGamma(_ signal: Double) -> Double {
        let (a, b, c) = (0.17883277, 0.28466892, 0.55991073)
        func scene(_ value: Double) -> Double { value <= 0.5 ? value * value / 3 : (exp((value - c) / a) + b) / 12 }
        return pow(scene(max(signal, 0)) / scene(0.75), 1.2)
    }

    /// Linear up to `knee`, then an exponential shoulder with the same slope there that
    /// approaches 1.
    private static func toneMapped(_ value: Double) -> Double {
        let knee = 0.8
        guard value > knee else { return max(value, 0) }
        return knee + (1 - knee) * (1 - exp(-(value - knee) / (1 - knee)))
    }

    private static func build(_ points: [Double], _ curve: Curve) -> Verdict {
        guard let context = iec_cms_context() else { return .unsupported("Little CMS could not create its context") }
        let toneCurve: OpaquePointer? =
            switch curve {
            case .sRGB:
                // IEC 61966-2.1 as parametric type 4: Y = (aX + b)^g for X ≥ d, cX below.
                [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045].withUnsafeBufferPointer {
                    cmsBuildParametricToneCurve(context, 4, $0.baseAddress)
                }
            case .gamma(let gamma): cmsBuildGamma(context, gamma)
            case .table(let function):
                // 4096 entries: a 10-bit signal's every level, four times over.
                (0..<4096).map { Float(function(Double($0) / 4095)) }.withUnsafeBufferPointer {
                    cmsBuildTabulatedToneCurveFloat(context, 4096, $0.baseAddress)
                }
            }
        guard let toneCurve else { return .unsupported("Little CMS could not build the transfer curve") }
        defer { cmsFreeToneCurve(toneCurve) }
        var white = cmsCIExyY(x: points[0], y: points[1], Y: 1)
        var colorants = cmsCIExyYTRIPLE(
            Red: cmsCIExyY(x: points[2], y: points[3], Y: 1), Green: cmsCIExyY(x: points[4], y: points[5], Y: 1),
            Blue: cmsCIExyY(x: points[6], y: points[7], Y: 1))
        var curves: [OpaquePointer?] = [toneCurve, toneCurve, toneCurve]
        guard let profile = cmsCreateRGBProfileTHR(context, &white, &colorants, &curves) else {
            return .unsupported("Little CMS could not build the profile")
        }
        defer { cmsCloseProfile(profile) }
        var size: cmsUInt32Number = 0
        guard cmsSaveProfileToMem(profile, nil, &size) != 0, size > 0 else {
            return .unsupported("Little CMS could not write the profile")
        }
        var bytes = [UInt8](repeating: 0, count: Int(size)) // small: a matrix-shaper profile Little CMS wrote, under 1 KiB
        guard bytes.withUnsafeMutableBytes({ cmsSaveProfileToMem(profile, $0.baseAddress, &size) }) != 0 else {
            return .unsupported("Little CMS could not write the profile")
        }
        return .profile(bytes)
    }
}
