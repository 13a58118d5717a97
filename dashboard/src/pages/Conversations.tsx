import { PageHeader } from '../components/ui';

export function Conversations() {
  return <PageHeader title="Conversations" />;
}
