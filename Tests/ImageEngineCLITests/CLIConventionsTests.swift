import Foundation
import Testing
import TestSupport

/// What every command shares: --version, help that shows defaults as typed, errors as one line
/// naming the file (or one JSON record in JSON mode), exit 64 for usage and 1 for failures.
@Suite("CLI: conventions")
struct CLIConventionsTests {
    @Test("--version prints the last release and that this build is past it, and exits 0")
    func version() async throws {
        let outcome = try await CLIRunner.run(["--version"])
        #expect(outcome.status == 0 && outcome.stdout == "0.6.0+main (unreleased changes after 0.6.0; see CHANGELOG.md)\n")
    }

    /// The help text of one option or argument: its first line and the indented lines after it.
    static func entry(_ name: String, in help: String) -> String? {
        let lines = help.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("  \(name)") }) else { return nil }
        let rest = lines[(start + 1)...].prefix { $0.hasPrefix("      ") }
        return ([lines[start]] + rest).joined(separator: " ")
    }

    @Test("every serve flag and environment variable is in the configuration reference, and it names no flag serve lacks")
    func serveConfigurationReference() async throws {
        let help = try await CLIRunner.run(["serve", "--help"])
        #expect(help.status == 0)
        let flags = Set(help.stdout.matches(of: /^  (--[a-z-]+)/.anchorsMatchLineEndings()).map { String($0.output.1) })
        #expect(flags.count > 25 && flags.contains("--bind"), "\(flags)")
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let article = try String(
            contentsOf: root.appendingPathComponent("Sources/ImageService/Documentation.docc/ConfiguringTheService.md"), encoding: .utf8)
        let documented = Set(article.matches(of: /\| `(--[a-z-]+)/).map { String($0.output.1) })
        #expect(flags.subtracting(["--help", "--version"]).subtracting(documented).isEmpty, "not documented: \(flags.subtracting(documented))")
        #expect(documented.subtracting(flags).isEmpty, "documented but not a flag: \(documented.subtracting(flags))")
        for variable in ["IMAGE_ENGINE_KEY", "IMAGE_ENGINE_SALT", "IMAGE_ENGINE_SIGNATURE_SIZE"] { #expect(article.contains("`\(variable)`")) }
    }

    @Test("help shows defaults as a user types them, once each, and describes every argument")
    func help() async throws {
        let compress = try await CLIRunner.run(["compress", "--help"])
        #expect(compress.status == 0)
        #expect(Self.entry("--budget", in: compress.stdout)?.contains("(default: 300KB)") == true, "\(compress.stdout)")
        #expect(!compress.stdout.contains("ByteCount"))
        let thumbnail = try await CLIRunner.run(["thumbnail", "--help"])
        let jobs = try #require(Self.entry("--jobs", in: thumbnail.stdout))
        #expect(jobs.components(separatedBy: "default").count == 2, "\(jobs)")
        for command in [["inspect"], ["thumbnail"], ["compress"], ["fetch"], ["cache", "put"], ["cache", "get"], ["cache", "put-dir"]] {
            let outcome = try await CLIRunner.run(command + ["--help"])
            #expect(outcome.status == 0, "\(command)")
            // Every positional argument has a description after its name.
            let arguments =
                outcome.stdout.components(separatedBy: "ARGUMENTS:").dropFirst().first?
                .components(separatedBy: "OPTIONS:").first ?? ""
            let names = arguments.split(separator: "\n").filter { $0.hasPrefix("  <") }
            #expect(!names.isEmpty, "\(command) lists no arguments")
            for line in names {
                #expect(line.split(separator: " ", omittingEmptySubsequences: true).count > 1, "\(command): \(line) has no help")
            }
        }
    }

    @Test("thumbnail of a directory: one line naming it, no Foundation error; in JSON mode a JSON line")
    func thumbnailOfDirectory() async throws {
        let directory = try TemporaryDirectory()
        let folder = directory.file("folder")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        let outcome = try await CLIRunner.run(["thumbnail", folder.path, "--output", directory.file("out").path])
        #expect(outcome.status == 1)
        #expect(outcome.stderr == "image-engine: \(folder.path): is a directory, not a file\n")
        let json = try await CLIRunner.run(["thumbnail", folder.path, "--output", directory.file("out").path, "--json"])
        #expect(json.status == 1 && json.stderr.isEmpty)
        #expect(json.jsonLines.count == 1 && json.jsonLines.first?["input"] as? String == folder.path)
        #expect(json.jsonLines.first?["error"] as? String == "\(folder.path): is a directory, not a file")
    }

    @Test("an output directory that cannot be created is one line naming it")
    func uncreatableOutput() async throws {
        let directory = try TemporaryDirectory()
        try Data("a file".utf8).write(to: directory.file("taken"))
        let kite = CLIRunner.samples.appendingPathComponent("Kite.jpg").path
        let thumbnail = try await CLIRunner.run(["thumbnail", kite, "--output", directory.file("taken/out").path])
        #expect(thumbnail.status == 1)
        #expect(thumbnail.stderr == "image-engine: cannot create the output directory: \(directory.file("taken/out").path): Not a directory\n")
    }

    @Test(
        "usage mistakes exit 64 and name the option",
        arguments: [
            (["thumbnail", "x.jpg", "--output", "o", "--jobs", "0"], "--jobs"),
            (["thumbnail", "x.jpg", "--output", "o", "--max-pixel-size", "-1"], "--max-pixel-size"),
            (["compress", "x.jpg", "--output", "o", "--min-pixel-size", "2000"], "--min-pixel-size"),
            (["compress", "x.jpg", "--output", "o", "--field", "novalue", "--multipart", "b"], "--field"),
            (["compress", "x.jpg", "--output", "o", "--field", "a=b"], "--field"),
            (["cache", "--dir", "d", "--size-limit", "0", "stats"], "--size-limit")
        ])
    func usage(arguments: [String], option: String) async throws {
        let outcome = try await CLIRunner.run(arguments)
        #expect(outcome.status == 64, "\(arguments): \(outcome.stderr)")
        #expect(outcome.stderr.contains(option), "\(arguments): \(outcome.stderr)")
    }
}
