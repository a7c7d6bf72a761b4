import CImageCodecShim

/// What a JPEG's header says about its components and scans: all a decode plan needs, so a
/// plan is computed without the decompressor that read it.
struct JPEGLayout: Sendable, Hashable {
    struct Component: Sendable, Hashable {
        var horizontalSampling: Int
        var verticalSampling: Int
        var widthInBlocks: Int
        var heightInBlocks: Int
    }

    var components: [Component]
    var maxVerticalSampling: Int
    /// Progressive, or a sequential file whose first scan does not hold every component: either
    /// way libjpeg keeps every coefficient until the last scan.
    var isMultiScan: Bool
    /// Stored as YCbCr, so luma alone is the Y channel.
    var isYCbCr: Bool

    init(_ info: jpeg_decompress_struct) {
        let count = max(0, Int(info.num_components))
        components = (0..<count).map { index in
            let component = info.comp_info[index]
            return Component(
                horizontalSampling: Int(component.h_samp_factor), verticalSampling: Int(component.v_samp_factor),
                widthInBlocks: Int(component.width_in_blocks), heightInBlocks: Int(component.height_in_blocks))
        }
        maxVerticalSampling = Int(info.max_v_samp_factor)
        isMultiScan = info.progressive_mode != 0 || Int(info.comps_in_scan) < count
        isYCbCr = info.jpeg_color_space == JCS_YCbCr
    }
}

/// The warning for a profile over `DecodingLimits.maxICCProfileBytes`.
enum ICCProfileLimit {
    static func warning(_ limits: DecodingLimits) -> DecodingWarning {
        DecodingWarning(code: 0, message: "ICC profile ignored, decoded as untagged: larger than the limit of \(limits.maxICCProfileBytes) bytes")
    }
}
