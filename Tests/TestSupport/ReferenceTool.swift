import Foundation

/// The codec libraries' own command-line tools (`dwebp`, `heif-convert`), run as reference
/// decoders: each writes its result to a file the caller reads.
public enum ReferenceTool {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs `name` (from /usr/bin or /usr/local/bin) with `arguments(output)`, where `output`
    /// is a fresh temporary file with `suffix`, and returns what the tool wrote there.
    /// `package` is what installs it, for the message when it is missing.
    public static func output(_ name: String, package: String, suffix: String, _ arguments: (URL) -> [String]) throws -> Data {
        let tool = try locate(name, package: package)
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)\(suffix)")
        defer { try? FileManager.default.removeItem(at: output) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments(output)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw Failure(description: "\(name) failed: \(process.arguments ?? [])") }
        return try Data(contentsOf: output)
    }

    /// What `name` prints to standard output when run with `arguments`.
    public static func standardOutput(_ name: String, package: String, _ arguments: [String]) throws -> String {
        let tool = try locate(name, package: package)
        let process = Process()
        let pipe = Pipe()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw Failure(description: "\(name) failed: \(arguments)") }
        return String(decoding: output, as: UTF8.self)
    }

    private static func locate(_ name: String, package: String) throws -> String {
        let tool = ["/usr/bin/\(name)", "/usr/local/bin/\(name)"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let tool else { throw Failure(description: "\(name) not found: install \(package) (scripts/test.sh does)") }
        return tool
    }
}
