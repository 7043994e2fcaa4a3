/** `1 message`, `3 more messages`: a count with its noun in the right English form, for log texts. */
export function messages(count: number, adjective?: string): string {
  return `${count} ${adjective ? `${adjective} ` : ''}${count === 1 ? 'message' : 'messages'}`;
}
