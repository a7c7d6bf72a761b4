import Foundation

/// `Tests/Fixtures/heif` (see its README) and libheif's own `heif-convert` as the reference
/// decoder.
public enum HEIFFixtures {
    public static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/heif")

    /// kite.heic, kite.avif, kite-p3.heic, kite-10bit.heic, calla-alpha.heic, calla-alpha.avif.
    public static func data(_ name: String) throws -> Data { try Data(contentsOf: directory.appendingPathComponent(name)) }

    public struct ToolError: Error, CustomStringConvertible {
        public var description: String
    }

    /// `heif-convert` of the fixture `name` to PNG: the file's primary image as libheif's own
    /// tool decodes it (8 bits, no ICC profile written).
    public static func heifConvert(_ name: String) throws -> Data {
        let tool = ["/usr/bin/heif-convert", "/usr/local/bin/heif-convert"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let tool else { throw ToolError(description: "heif-convert not found: install libheif-examples (scripts/test.sh does)") }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("heif-convert-\(UUID().uuidString).png")
        defer { try? FileManager.default.removeItem(at: output) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = [directory.appendingPathComponent(name).path, output.path]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ToolError(description: "heif-convert failed on \(name)") }
        return try Data(contentsOf: output)
    }
}
