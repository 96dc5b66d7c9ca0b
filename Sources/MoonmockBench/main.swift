import Foundation

let code = await Bench.main(Array(CommandLine.arguments.dropFirst()))
exit(code)
