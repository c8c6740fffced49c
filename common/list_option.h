// A comma-separated list flag (--subsystems a,b --subsystems c) appended into a repeated field,
// such as a RecordingSettings' subsystems or devices: ntprofctl start and the collector's
// standing session take the same lists the same way.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace ntprof::cli {

template <typename Repeated>  // google::protobuf::RepeatedPtrField<std::string>
CLI::Option* AddListOption(CLI::App* app, const std::string& name, Repeated* field,
                           const std::string& help) {
  return app
      ->add_option_function<std::vector<std::string>>(
          name,
          [field](const std::vector<std::string>& values) {
            for (const std::string& value : values) *field->Add() = value;
          },
          help)
      ->delimiter(',');
}

}  // namespace ntprof::cli
