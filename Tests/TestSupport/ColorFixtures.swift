import Foundation

/// ICC profiles under `Tests/Fixtures/color` (see its README for where each comes from), and
/// Little CMS' `transicc`, the reference the colour-management tests compare against.
public enum ColorFixtures {
    public static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/color")

    /// `DisplayP3.icc`, `AdobeRGB-compatible.icc`, `ProPhoto.icc`, `P3-matrix-and-LUT.icc`, `Gray.icc` or
    /// `FOGRA39L-colprof.icc`.
    public static func profile(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    public struct TransiccError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Each input colour converted by `transicc -t1 -b -s` (relative colorimetric, black point
    /// compensation, clipped) from the profile to sRGB, rounded to 8 bits. Inputs are 8-bit
    /// channel values; CMYK ones are given with 255 = full ink and passed as percentages.
    public static func transicc(_ colors: [[UInt8]], from profile: String, cmyk: Bool = false) throws -> [[UInt8]] {
        let tool = ["/usr/bin/transicc", "/usr/local/bin/transicc"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let tool else {
            throw TransiccError(description: "transicc not found: install liblcms2-utils (scripts/test.sh does)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["-n", "-s", "-t1", "-b", "-i" + directory.appendingPathComponent(profile).path, "-o*sRGB"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let lines = colors.map { color in
            color.map { cmyk ? String(format: "%.4f", Double($0) / 2.55) : String($0) }.joined(separator: " ")
        }
        input.fileHandleForWriting.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        try input.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let rows = text.split(separator: "\n").map { line in
            line.split(separator: " ").compactMap { Double($0) }.map { UInt8(max(0, min(255, $0.rounded()))) }
        }
        guard process.terminationStatus == 0, rows.count == colors.count, rows.allSatisfy({ $0.count == 3 }) else {
            throw TransiccError(description: "transicc failed (status \(process.terminationStatus)): \(text)")
        }
        return rows
    }
}
