/// What one decode does about colour: how pixels are converted (which sink does it is
/// `RowSinks.make(source:target:format:boxPreReduction:plan:)`'s choice), which profile the
/// bitmap keeps, and what to tell the caller.
struct ColorPlan {
    /// How pixels are converted; nil leaves them as decoded.
    enum Conversion {
        /// CMYK without a usable profile: the formula browsers and libvips use without a CMS.
        case naiveCMYK(inverted: Bool)
        case transform(ColorTransform)
    }

    var conversion: Conversion?
    var outputProfile: [UInt8]?
    var warning: DecodingWarning?

    /// What colour management may hold during a decode for a profile of `profileBytes`: the
    /// profile reassembled (JPEG) or copied out of libpng, its copy in the transform cache's key,
    /// and Little CMS' precomputed transform tables (a 33³ grid at 16 bits and its
    /// prelinearisation curves, well under `transformBytes`).
    static func plannedBytes(profileBytes: Int) -> Int {
        profileBytes == 0 ? 0 : 2 * profileBytes + transformBytes
    }

    static let transformBytes = 512 << 10

    /// The plan for rows in `layout` from a source with `profile`.
    static func make(
        profile: [UInt8]?, layout: ColorLayout, management: ColorManagement,
        cache: ColorTransformCache = .shared
    ) -> ColorPlan {
        if case .cmyk(let inverted) = layout {
            // A bitmap has no CMYK layout, so CMYK becomes sRGB whatever the option says.
            guard let profile else { return ColorPlan(conversion: .naiveCMYK(inverted: inverted)) }
            switch verdict(profile: profile, layout: layout, cache: cache) {
            case .transform(let transform): return ColorPlan(conversion: .transform(transform))
            case .sRGB: return ColorPlan(conversion: .naiveCMYK(inverted: inverted)) // unreachable: CMYK is never sRGB
            case .rejected(let reason): return ColorPlan(conversion: .naiveCMYK(inverted: inverted), warning: ignored(reason))
            }
        }
        guard let profile else { return ColorPlan() }
        if management == .preserveSource {
            // Kept only if it describes these pixels: an RGB profile on a gray JPEG would make
            // every viewer that manages colour show it wrong.
            let space = ICCProfileHeader(profile)?.colorSpace
            guard space == layout.profileColorSpace else {
                cache.countIgnored()
                return ColorPlan(warning: ignored(mismatch(space, layout)))
            }
            return ColorPlan(outputProfile: profile)
        }
        switch verdict(profile: profile, layout: layout, cache: cache) {
        case .transform(let transform): return ColorPlan(conversion: .transform(transform))
        case .sRGB: return ColorPlan()
        case .rejected(let reason): return ColorPlan(warning: ignored(reason))
        }
    }

    /// The cached verdict, or a rejection when the profile does not describe this kind of
    /// image (a CMYK profile in an RGB JPEG, an RGB one in a gray PNG).
    private static func verdict(profile: [UInt8], layout: ColorLayout, cache: ColorTransformCache) -> ColorTransformCache.Entry {
        let space = ICCProfileHeader(profile)?.colorSpace
        guard space == layout.profileColorSpace else {
            cache.countIgnored()
            return .rejected(mismatch(space, layout))
        }
        return cache.entry(for: profile, layout: layout)
    }

    private static func mismatch(_ space: ICCProfileHeader.ColorSpace?, _ layout: ColorLayout) -> String {
        guard let space else { return "not an ICC profile" }
        return "a \(space) profile does not describe \(layout.profileColorSpace) pixels"
    }

    private static func ignored(_ reason: String) -> DecodingWarning {
        DecodingWarning(code: 0, message: "ICC profile ignored, decoded as untagged: \(reason)")
    }
}
