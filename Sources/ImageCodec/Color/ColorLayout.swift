import CImageCodecShim

/// The pixel layout decoded rows arrive in, as far as colour management cares.
enum ColorLayout: Sendable, Hashable {
    case rgb, rgba, gray, grayAlpha
    /// CMYK with 255 meaning full ink; `inverted`: Adobe's 0 = full ink.
    case cmyk(inverted: Bool)

    init(_ format: PixelFormat) {
        self =
            switch format {
            case .gray: .gray
            case .grayAlpha: .grayAlpha
            case .rgb: .rgb
            case .rgba: .rgba
            }
    }

    /// The ICC data colour space a profile must have to describe this layout.
    var profileColorSpace: ICCProfileHeader.ColorSpace {
        switch self {
        case .rgb, .rgba: .rgb
        case .gray, .grayAlpha: .gray
        case .cmyk: .cmyk
        }
    }

    /// The layout of converted rows: CMYK becomes RGB, the rest keep theirs.
    var output: ColorLayout {
        if case .cmyk = self { return .rgb }
        return self
    }

    var channels: Int {
        switch self {
        case .gray: 1
        case .grayAlpha: 2
        case .rgb: 3
        case .rgba, .cmyk: 4
        }
    }

    var shimLayout: iec_cms_layout {
        switch self {
        case .rgb: IEC_CMS_RGB
        case .rgba: IEC_CMS_RGBA
        case .gray: IEC_CMS_GRAY
        case .grayAlpha: IEC_CMS_GRAYA
        case .cmyk(let inverted): inverted ? IEC_CMS_CMYK_INVERTED : IEC_CMS_CMYK
        }
    }
}
